// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the checkpoint unpickler (core/tensor/ptnative's openPtCheckpoint, checkpoint compare's
// model_optim_rng.pt). The input is the pickle stream (data.pkl): an even first byte wraps the rest in a stored
// torch.save zip (archive/data.pkl, archive/data/0 of 64 bytes), an odd one writes it as it is (the legacy,
// non-zip format). Every node of an accepted checkpoint is walked; nothing may be executed, nothing may crash.
#include "fuzzfile.h"
#include "core/tensor/ptnative.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace probescope;
using namespace probescope::tensor;

namespace {

void put16(std::string& out, std::uint32_t v)
{
    out += static_cast<char>(v & 0xFF);
    out += static_cast<char>((v >> 8) & 0xFF);
}

void put32(std::string& out, std::uint32_t v)
{
    put16(out, v & 0xFFFF);
    put16(out, v >> 16);
}

/// A stored (uncompressed) zip of `files`, as torch.save writes its records.
std::string storedZip(const std::vector<std::pair<std::string, std::string_view>>& files)
{
    std::string out;
    std::string central;
    for (const auto& [name, body] : files) {
        const auto crc = static_cast<std::uint32_t>(
            crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
        const auto offset = static_cast<std::uint32_t>(out.size());
        const auto size = static_cast<std::uint32_t>(body.size());
        put32(out, 0x04034b50);
        put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0x21);
        put32(out, crc), put32(out, size), put32(out, size);
        put16(out, static_cast<std::uint32_t>(name.size())), put16(out, 0);
        out += name;
        out.append(body.data(), body.size());
        put32(central, 0x02014b50);
        put16(central, 20), put16(central, 20), put16(central, 0), put16(central, 0), put16(central, 0);
        put16(central, 0x21);
        put32(central, crc), put32(central, size), put32(central, size);
        put16(central, static_cast<std::uint32_t>(name.size())), put16(central, 0), put16(central, 0);
        put16(central, 0), put16(central, 0), put32(central, 0), put32(central, offset);
        central += name;
    }
    const auto centralOffset = static_cast<std::uint32_t>(out.size());
    out += central;
    put32(out, 0x06054b50);
    put16(out, 0), put16(out, 0);
    put16(out, static_cast<std::uint32_t>(files.size())), put16(out, static_cast<std::uint32_t>(files.size()));
    put32(out, static_cast<std::uint32_t>(central.size())), put32(out, centralOffset), put16(out, 0);
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const std::string_view pickle(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::string file;
    if ((data[0] & 1) == 0)
        file = storedZip({ { "archive/data.pkl", pickle }, { "archive/data/0", std::string_view(std::string(64, '\1')) } });
    else
        file.assign(pickle);
    const auto path = fuzz::writeInput("fuzz.pt", reinterpret_cast<const std::uint8_t*>(file.data()), file.size());
    PickleLimits limits;
    limits.maxPickleBytes = 1 << 20;
    limits.maxObjects = 1 << 16;
    auto ckpt = openPtCheckpoint(path, limits);
    if (!ckpt)
        return 0;
    // Walk every node once (an explicit stack: a deep pickle must not overflow ours either).
    std::vector<PtCheckpoint::Node> todo { ckpt->root() };
    std::size_t visited = 0;
    while (!todo.empty() && visited < (1U << 18)) {
        const PtCheckpoint::Node node = todo.back();
        todo.pop_back();
        ++visited;
        switch (ckpt->type(node)) {
        case PtCheckpoint::Type::Tuple:
        case PtCheckpoint::Type::List:
            for (std::size_t i = 0; i < ckpt->size(node); ++i)
                todo.push_back(ckpt->item(node, i));
            break;
        case PtCheckpoint::Type::Dict:
            for (std::size_t i = 0; i < ckpt->size(node); ++i) {
                todo.push_back(ckpt->key(node, i));
                todo.push_back(ckpt->value(node, i));
            }
            break;
        case PtCheckpoint::Type::String:
        case PtCheckpoint::Type::Bytes:
        case PtCheckpoint::Type::Object:
        case PtCheckpoint::Type::Global:
            (void)ckpt->text(node);
            (void)ckpt->attribute(node, "args");
            break;
        case PtCheckpoint::Type::Tensor:
            (void)ckpt->tensor(node).numel;
            break;
        default:
            (void)ckpt->integer(node);
            break;
        }
    }
    return 0;
}
