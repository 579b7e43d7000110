// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace probescope::collect {

/// The bytes of one dense, C-contiguous, little-endian CPU tensor to be saved.
struct PtTensorBytes
{
    std::string_view storageType;     ///< torch's storage class: "FloatStorage", "LongStorage", "BoolStorage", ...
    std::vector<std::int64_t> shape;  ///< empty for a 0-d tensor
    const void* data = nullptr;
    std::size_t bytes = 0;            ///< numel * element size
    std::size_t elementSize = 1;
};

/// zlib's CRC-32 of `bytes` (what msprobe's summary_mode md5 and the zip records use).
std::uint32_t crc32Of(const void* data, std::size_t bytes);

/**
 * @brief Writes `path` exactly as Python torch.save (torch 1.13, zip format) saves one detached tensor.
 *
 * Records `<stem>/data.pkl` (protocol-2 pickle calling torch._utils._rebuild_tensor_v2 on one
 * persistent storage, requires_grad False, as msprobe saves detached clones), `<stem>/data/0` (the raw
 * storage, aligned to 64 bytes as torch aligns it), `<stem>/version` ("3\n"), stored uncompressed, with
 * zip64 records when the storage or the file passes 4 GiB. The storage bytes go from `t.data` to the
 * kernel in one writev(), not through a copy. `crc` may pass the storage's CRC-32 when the caller
 * computed it already. Error id: collect.io.
 */
std::optional<Diagnostic> writePt(const std::filesystem::path& path, const PtTensorBytes& t,
                                  std::optional<std::uint32_t> crc = std::nullopt);

/**
 * @brief The slow-disk test seam: every writePt() takes at least its bytes / `bytesPerSecond`.
 *
 * The bytes go out in pieces of about 10 ms each, with sleeps between, as a disk of that speed takes
 * them (so a process killed meanwhile leaves a partly written file, as on a slow disk). The environment
 * variable PROBESCOPE_TEST_DISK_MBPS=N (decimal megabytes per second) sets it for a process; 0 = off,
 * what every real run has (one relaxed load per file).
 */
void setTestDiskSpeed(std::uint64_t bytesPerSecond);

} // namespace probescope::collect
