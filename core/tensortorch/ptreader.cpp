// SPDX-License-Identifier: Apache-2.0
// The only translation unit that sees LibTorch headers: they cost seconds to compile, and keeping
// them here means the rest of ProbeScope builds without them. loadPt uses the native reader
// (ptnative.cpp); this one stays as its cross-check in the tests.
#include "core/tensor/ptnative.h"
#include "core/tensortorch/torchpt.h"
#include "core/util/fileio.h"

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/storage_context.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>

namespace probescope::tensor {

namespace {

Diagnostic ptError(const std::filesystem::path& path, std::string id, std::string message,
                   std::optional<std::uint64_t> offset = std::nullopt)
{
    return makeError(std::move(id), SourceLocation { path.string(), offset, 0, 0 }, std::move(message));
}

/// torch messages carry a C++ backtrace after the first line; users only need the first line.
std::string firstLine(const char* what)
{
    std::string text = what ? what : "";
    const auto end = text.find('\n');
    if (end != std::string::npos)
        text.resize(end);
    return text.empty() ? std::string("unknown error") : text;
}

/// Lets torch's zip reader read straight from the mapped file instead of a copy of it.
class MappedFileAdapter final : public caffe2::serialize::ReadAdapterInterface
{
public:
    explicit MappedFileAdapter(std::shared_ptr<const MappedFile> file)
        : m_file(std::move(file))
    {
    }

    size_t size() const override { return m_file->text().size(); }

    size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override
    {
        const std::string_view bytes = m_file->text();
        if (pos >= bytes.size())
            return 0;
        const size_t count = std::min<uint64_t>(n, bytes.size() - pos);
        std::memcpy(buf, bytes.data() + pos, count);
        return count;
    }

private:
    std::shared_ptr<const MappedFile> m_file;
};

std::optional<DType> fromScalarType(c10::ScalarType type)
{
    switch (type) {
    case c10::ScalarType::Bool:
        return DType::Bool;
    case c10::ScalarType::Byte:
        return DType::UInt8;
    case c10::ScalarType::Char:
        return DType::Int8;
    case c10::ScalarType::Short:
        return DType::Int16;
    case c10::ScalarType::Int:
        return DType::Int32;
    case c10::ScalarType::Long:
        return DType::Int64;
    case c10::ScalarType::Half:
        return DType::Float16;
    case c10::ScalarType::BFloat16:
        return DType::BFloat16;
    case c10::ScalarType::Float:
        return DType::Float32;
    case c10::ScalarType::Double:
        return DType::Float64;
    default:
        return std::nullopt;
    }
}

/**
 * torch's unpickler trusts the sizes, strides, storage offset and element count in the pickle, so a
 * damaged file can describe a view reaching past the bytes actually stored. Copying such a view
 * would read out of bounds; this checks the furthest element against the storage record first.
 * `realStorages` are the storages built from zip records, whose sizes are the true byte counts.
 */
std::optional<std::string> checkViewFitsStorage(const at::Tensor& t, const std::vector<const c10::StorageImpl*>& realStorages)
{
    const std::int64_t numel = t.numel();
    if (numel == 0)
        return std::nullopt;
    if (!t.has_storage())
        return std::string("the tensor has no storage");
    if (std::find(realStorages.begin(), realStorages.end(), t.storage().unsafeGetStorageImpl()) == realStorages.end())
        return std::string("the tensor's storage record is missing from the archive");
    const std::int64_t offset = t.storage_offset();
    if (offset < 0)
        return std::string("the tensor has a negative storage offset");
    std::int64_t lastElement = offset;
    const auto sizes = t.sizes();
    const auto strides = t.strides();
    if (sizes.size() != strides.size())
        return std::string("the tensor's sizes and strides disagree in length");
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        if (sizes[k] <= 0 || strides[k] < 0)
            return std::string("the tensor has a negative size or stride");
        std::int64_t reach = 0;
        if (__builtin_mul_overflow(sizes[k] - 1, strides[k], &reach)
            || __builtin_add_overflow(lastElement, reach, &lastElement))
            return std::string("the tensor's sizes and strides overflow");
    }
    const std::uint64_t itemSize = t.dtype().itemsize();
    const std::uint64_t storageBytes = t.storage().nbytes();
    const auto elements = static_cast<std::uint64_t>(lastElement) + 1;
    if (itemSize == 0 || elements > storageBytes / itemSize) {
        return "the tensor's shape and strides reach element " + std::to_string(lastElement)
            + " but its storage record holds " + std::to_string(itemSize ? storageBytes / itemSize : 0);
    }
    return std::nullopt;
}

std::string describe(const c10::IValue& value)
{
    if (value.isGenericDict())
        return "dict";
    if (value.isList())
        return "list";
    if (value.isTuple())
        return "tuple";
    if (value.isNone())
        return "None";
    if (value.isString())
        return "string";
    if (value.isInt() || value.isDouble() || value.isBool())
        return "plain number";
    return value.tagKind();
}

Result<Tensor> convert(const std::filesystem::path& path, const c10::IValue& value,
                       const std::vector<const c10::StorageImpl*>& realStorages)
{
    if (!value.isTensor()) {
        return ptError(path, "tensor.pt-not-tensor",
                       "the file holds a " + describe(value) + ", not a single tensor");
    }
    const at::Tensor& source = value.toTensor();
    if (!source.defined())
        return ptError(path, "tensor.pt-not-tensor", "the file holds an undefined tensor");
    if (source.layout() != c10::kStrided) {
        return ptError(path, "tensor.pt-not-tensor",
                       "the file holds a sparse or otherwise non-dense tensor, which is not supported");
    }
    if (source.is_quantized() || source.is_complex()) {
        return ptError(path, "tensor.dtype-unsupported",
                       std::string("element type ") + c10::toString(source.scalar_type()) + " is not supported");
    }
    const std::optional<DType> dtype = fromScalarType(source.scalar_type());
    if (!dtype) {
        return ptError(path, "tensor.dtype-unsupported",
                       std::string("element type ") + c10::toString(source.scalar_type())
                           + " is not supported (bool, uint8, int8/16/32/64, float16, bfloat16, float32/64 are)");
    }
    if (!source.device().is_cpu())
        return ptError(path, "tensor.pt-corrupt", "the tensor was not loaded into CPU memory");
    if (auto problem = checkViewFitsStorage(source, realStorages))
        return ptError(path, "tensor.pt-corrupt", "damaged tensor record: " + *problem);

    const at::Tensor contiguous = source.contiguous();
    Tensor tensor;
    tensor.dtype = *dtype;
    tensor.shape.assign(contiguous.sizes().begin(), contiguous.sizes().end());
    const std::size_t bytes = static_cast<std::size_t>(contiguous.numel()) * dtypeSize(*dtype);
    tensor.data.resize(bytes);
    if (bytes > 0)
        std::memcpy(tensor.data.data(), contiguous.data_ptr(), bytes);
    return tensor;
}

} // namespace

Result<Tensor> loadPtWithTorch(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return ptError(path, "tensor.missing", "file does not exist");
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    const std::string_view bytes = (*mapped)->text();
    if (bytes.size() < 4 || std::memcmp(bytes.data(), "PK\x03\x04", 4) != 0) {
        return ptError(path, "tensor.pt-format",
                       bytes.empty() ? std::string("the file is empty")
                                     : std::string("not a torch.save zip archive (legacy format or not a .pt file)"),
                       0);
    }

    try {
        caffe2::serialize::PyTorchStreamReader reader(std::make_shared<MappedFileAdapter>(*mapped));

        // The same reader serves the check and the load, so both see the same data.pkl.
        auto [pickleData, pickleSize] = reader.getRecord("data.pkl");
        const std::string_view pickle(static_cast<const char*>(pickleData.get()), pickleSize);
        if (auto problem = checkTorchPickle(pickle)) {
            if (problem->notATensor)
                return ptError(path, "tensor.pt-not-tensor", problem->message,
                               reader.getRecordOffset("data.pkl") + problem->offset);
            return ptError(path, "tensor.pt-corrupt", "damaged data.pkl record: " + problem->message,
                           reader.getRecordOffset("data.pkl") + problem->offset);
        }

        // Storages are read here rather than by the unpickler so that their sizes are the real
        // record sizes, not the element counts claimed by the pickle.
        auto storages = std::make_shared<torch::jit::DeserializationStorageContext>();
        std::vector<const c10::StorageImpl*> realStorages;
        for (const std::string& record : reader.getAllRecords()) {
            constexpr std::string_view kDataDir = "data/";
            if (record.size() <= kDataDir.size() || record.compare(0, kDataDir.size(), kDataDir) != 0)
                continue;
            const std::string key = record.substr(kDataDir.size());
            if (storages->hasStorage(key))
                continue;
            auto [data, size] = reader.getRecord(record);
            c10::Storage storage(c10::Storage::use_byte_size_t(), size, std::move(data), nullptr, false);
            realStorages.push_back(storage.unsafeGetStorageImpl());
            storages->addStorage(key, std::move(storage));
        }

        const c10::IValue value = torch::jit::readArchiveAndTensors(
            "data", /*pickle_prefix=*/"", /*tensor_prefix=*/"", /*type_resolver=*/c10::nullopt,
            /*obj_loader=*/c10::nullopt, /*device=*/c10::Device(c10::kCPU), reader,
            torch::jit::Unpickler::defaultTypeParser, storages);
        return convert(path, value, realStorages);
    } catch (const c10::Error& e) {
        return ptError(path, "tensor.pt-corrupt", "torch could not read the file: " + firstLine(e.what_without_backtrace()));
    } catch (const std::bad_alloc&) {
        return ptError(path, "tensor.pt-corrupt", "torch could not read the file: out of memory (damaged size field?)");
    } catch (const std::exception& e) {
        return ptError(path, "tensor.pt-corrupt", "torch could not read the file: " + firstLine(e.what()));
    } catch (...) {
        return ptError(path, "tensor.pt-corrupt", "torch could not read the file: unknown error");
    }
}

} // namespace probescope::tensor
