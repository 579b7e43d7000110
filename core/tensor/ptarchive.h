// SPDX-License-Identifier: Apache-2.0
#pragma once
// The torch.save archive as a whole (internal to core/tensor; ptnative.cpp): its records, its unpickled data.pkl
// and where a tensor's elements lie, shared by the single-tensor reader and the checkpoint reader (ptcheckpoint.cpp).
#include "core/tensor/ptpickle.h"
#include "core/tensor/tensor.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::tensor::pt {

/// Everything about the tensor but its elements: checked, with where the elements are.
struct PtLayout
{
    DType dtype = DType::Float32;
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides;
    std::int64_t offset = 0;        ///< storage offset, in elements
    std::int64_t numel = 0;
    std::uint64_t outBytes = 0;     ///< numel * item size
    std::uint64_t storageOffset = 0; ///< where the storage record's bytes start in the file
    std::uint64_t storageBytes = 0;
    bool contiguous = true;
    /// File offset of element 0 of a contiguous view.
    std::uint64_t dataStart() const { return storageOffset + static_cast<std::uint64_t>(offset) * dtypeSize(dtype); }
};

/// A torch.save archive's records and its unpickled data.pkl (the pickle bytes stay alive with it).
struct ArchiveHead
{
    std::vector<ZipRecord> records;
    std::string_view prefix; ///< the first record's folder, "archive/" (a view into that record's name)
    const ZipRecord* version = nullptr;
    const ZipRecord* pickleRecord = nullptr;
    std::shared_ptr<std::string> pickleBytes; ///< the values' texts point into it (or into the caller's memory)
    PickleResult pickle;
};

Outcome<ArchiveHead> readArchiveHead(const Source& source, const MachineLimits& limits, std::uint64_t maxPickleBytes);

/// Where a rebuilt tensor's elements lie, checked against its storage record (`storage` null: the record is missing).
Outcome<PtLayout> tensorLayout(const PickleResult& pr, const Value& top, const ZipRecord* storage,
                               const std::string& storageName);

Diagnostic toDiagnostic(const std::filesystem::path& path, PtFailure failure);

/// The archive read whole into a Tensor; `head` is the file's first bytes (a file that is not a zip is named so).
Result<Tensor> parseSource(const Source& source, const std::filesystem::path& path, std::string_view head);

Diagnostic ioError(const std::filesystem::path& path, std::string message);

} // namespace probescope::tensor::pt
