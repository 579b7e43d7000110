// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the zip reader of the gate (config_check packs, xlsx workbooks): the checks of every entry,
// reading and streaming each one, and extraction into a fresh folder (nothing may land outside it).
#include "fuzzfile.h"
#include "core/util/ziparchive.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("fuzz.zip", data, size);
    ZipLimits limits;
    limits.maxEntries = 1000;
    limits.maxEntryBytes = 1 << 20;
    limits.maxTotalBytes = 4 << 20;
    auto zip = ZipReader::open(path, limits);
    if (!zip)
        return 0;
    for (const auto& entry : (*zip)->entries()) {
        auto content = (*zip)->read(entry);
        if (content && content->size() > entry.size)
            std::abort(); // never more than the listed size
        (void)(*zip)->stream(entry, [](std::string_view) { return std::optional<Diagnostic> {}; });
    }
    const auto out = fuzz::scratchDir() / "extract";
    std::error_code ec;
    std::filesystem::remove_all(out, ec);
    auto written = extractZip(**zip, out);
    if (written) {
        for (const auto& name : *written) {
            const auto full = std::filesystem::weakly_canonical(out / name);
            const auto root = std::filesystem::weakly_canonical(out);
            if (full.string().rfind(root.string() + "/", 0) != 0)
                std::abort(); // an extracted file outside the folder
        }
    }
    return 0;
}
