// SPDX-License-Identifier: Apache-2.0
// torch.save checkpoints (model_optim_rng.pt): the same zip reader and archive head as the single-tensor reader,
// with the pickle machine in checkpoint mode; every tensor located, none read.
#include "core/tensor/ptnative.h"
#include "core/tensor/ptarchive.h"
#include "core/util/fileio.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace probescope::tensor {

using namespace pt;

struct PtCheckpoint::Impl
{
    std::filesystem::path path;
    int fd = -1;
    ArchiveHead head;
    std::vector<PtTensorRef> tensors; ///< Value::number of a Tensor value indexes it
    ~Impl()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

namespace {
const Value& valueOf(const PickleResult& pr, PtCheckpoint::Node node)
{
    return pr.values[node];
}
} // namespace

PtCheckpoint::Node PtCheckpoint::root() const
{
    return m_impl->head.pickle.top;
}

PtCheckpoint::Type PtCheckpoint::type(Node node) const
{
    switch (valueOf(m_impl->head.pickle, node).kind) {
    case Kind::None:
        return Type::None;
    case Kind::Bool:
        return Type::Bool;
    case Kind::Int:
        return Type::Int;
    case Kind::Float:
        return Type::Float;
    case Kind::String:
        return Type::String;
    case Kind::Bytes:
        return Type::Bytes;
    case Kind::Tuple:
        return Type::Tuple;
    case Kind::List:
        return Type::List;
    case Kind::Dict:
        return Type::Dict;
    case Kind::Object:
        return Type::Object;
    case Kind::Global:
        return Type::Global;
    case Kind::Tensor:
        return Type::Tensor;
    default:
        return Type::Other;
    }
}

std::int64_t PtCheckpoint::integer(Node node) const
{
    return valueOf(m_impl->head.pickle, node).number;
}

std::string PtCheckpoint::text(Node node) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value* v = &valueOf(pr, node);
    if (v->kind == Kind::Object)
        v = &pr.values[pr.objects[v->first].callable];
    std::string out(v->text);
    if (v->kind == Kind::Global)
        std::replace(out.begin(), out.end(), '\n', '.');
    return out;
}

std::size_t PtCheckpoint::size(Node node) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value& v = valueOf(pr, node);
    switch (v.kind) {
    case Kind::Tuple:
        return v.count;
    case Kind::List:
        return pr.containers[v.first].size();
    case Kind::Dict:
        return pr.containers[v.first].size() / 2;
    default:
        return 0;
    }
}

PtCheckpoint::Node PtCheckpoint::item(Node node, std::size_t i) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value& v = valueOf(pr, node);
    return v.kind == Kind::Tuple ? pr.items[v.first + i] : pr.containers[v.first][i];
}

PtCheckpoint::Node PtCheckpoint::key(Node dict, std::size_t i) const
{
    return m_impl->head.pickle.containers[valueOf(m_impl->head.pickle, dict).first][2 * i];
}

PtCheckpoint::Node PtCheckpoint::value(Node dict, std::size_t i) const
{
    return m_impl->head.pickle.containers[valueOf(m_impl->head.pickle, dict).first][2 * i + 1];
}

std::optional<PtCheckpoint::Node> PtCheckpoint::find(Node dict, std::string_view name) const
{
    if (type(dict) != Type::Dict)
        return std::nullopt;
    std::optional<Node> found;
    for (std::size_t i = 0; i < size(dict); ++i) {
        const Value& k = valueOf(m_impl->head.pickle, key(dict, i));
        if (k.kind == Kind::String && k.text == name)
            found = value(dict, i);
    }
    return found;
}

std::optional<PtCheckpoint::Node> PtCheckpoint::attribute(Node object, std::string_view name) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value& v = valueOf(pr, object);
    if (v.kind != Kind::Object)
        return std::nullopt;
    Node state = pr.objects[v.first].state;
    if (state == 0xFFFFFFFF) // never BUILT
        return std::nullopt;
    // (dict_state, slot_state) from objects with __slots__
    if (type(state) == Type::Tuple && size(state) == 2)
        state = item(state, 0);
    return find(state, name);
}

const PtTensorRef& PtCheckpoint::tensor(Node node) const
{
    return m_impl->tensors[static_cast<std::size_t>(valueOf(m_impl->head.pickle, node).number)];
}

const std::filesystem::path& PtCheckpoint::path() const
{
    return m_impl->path;
}

int PtCheckpoint::fd() const
{
    return m_impl->fd;
}

Result<PtCheckpoint> openPtCheckpoint(const std::filesystem::path& path, const PickleLimits& limits)
{
    auto opened = openRegularFile(path);
    if (!opened)
        return opened.error();
    auto impl = std::make_shared<PtCheckpoint::Impl>();
    impl->path = path;
    impl->fd = *opened;
    struct stat st {};
    if (::fstat(impl->fd, &st) != 0)
        return ioError(path, "cannot stat file");
    const FileSource source(impl->fd, static_cast<std::uint64_t>(st.st_size));
    char headBytes[4] = {};
    const std::size_t headSize = st.st_size < 4 ? static_cast<std::size_t>(st.st_size) : 4;
    if (!preadAll(impl->fd, 0, headSize, headBytes))
        return ioError(path, "read failed");
    if (headSize < 4 || std::memcmp(headBytes, "PK\x03\x04", 4) != 0)
        return parseSource(source, path, std::string_view(headBytes, headSize)).error();
    try {
        MachineLimits machine;
        machine.general = true;
        machine.maxObjects = limits.maxObjects;
        machine.maxMarks = limits.maxMarks;
        machine.maxStack = limits.maxStack;
        auto head = readArchiveHead(source, machine, limits.maxPickleBytes);
        if (!head)
            return toDiagnostic(path, std::move(head.failure()));
        impl->head = std::move(*head);
        // The records by name: a checkpoint has thousands of storages.
        std::unordered_map<std::string_view, const ZipRecord*> byName;
        byName.reserve(impl->head.records.size());
        for (const ZipRecord& r : impl->head.records)
            byName.emplace(r.name, &r);
        PickleResult& pr = impl->head.pickle;
        std::string storageName;
        for (Value& v : pr.values) {
            if (v.kind != Kind::Tensor)
                continue;
            const Value& storageRef = pr.values[pr.items[v.first]];
            storageName = std::string(impl->head.prefix) + "data/" + std::string(pr.values[pr.items[storageRef.first + 2]].text);
            const auto it = byName.find(storageName);
            PtTensorRef ref;
            const StorageKind& kind = kStorageKinds[static_cast<std::size_t>(pr.values[pr.items[storageRef.first + 1]].number)];
            ref.dtypeName = std::string(kind.name.substr(0, kind.name.size() - 7));
            auto layout = tensorLayout(pr, v, it == byName.end() ? nullptr : it->second, storageName);
            if (!layout) {
                if (std::string_view(layout.failure().id) != "tensor.dtype-unsupported")
                    return toDiagnostic(path, std::move(layout.failure()));
                // Not an error until the tensor is compared: optimizer or RNG state may hold such types.
                ref.shape.clear();
            } else {
                ref.dtype = layout->dtype;
                ref.shape = layout->sizes;
                ref.strides = layout->strides;
                ref.offset = layout->offset;
                ref.numel = layout->numel;
                ref.storageOffset = layout->storageOffset;
                ref.storageBytes = layout->storageBytes;
                ref.contiguous = layout->contiguous;
            }
            v.number = static_cast<std::int64_t>(impl->tensors.size());
            impl->tensors.push_back(std::move(ref));
        }
    } catch (const std::bad_alloc&) {
        return toDiagnostic(path, corrupt("out of memory while reading the file"));
    }
    PtCheckpoint checkpoint;
    checkpoint.m_impl = std::move(impl);
    return checkpoint;
}

} // namespace probescope::tensor
