// SPDX-License-Identifier: Apache-2.0
// Helpers of the collection tests: config files, and reading dumps back with ProbeScope's own readers
// (the oracle the collector is written for). Temporary folders: tests/core/tempdir.h, one per test.
#pragma once

#include "core/tempdir.h"
#include "dump/dumpfile.h"
#include "dump/jsondocument.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace probescope::testing {

inline void writeFile(const std::filesystem::path& p, const std::string& text)
{
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

/// A dump.json read back completely (not salvaged: after stop() it must be whole).
class DumpReadBack
{
public:
    explicit DumpReadBack(const std::filesystem::path& file)
    {
        dump::ReadOptions options;
        options.salvageTruncated = false;
        auto d = dump::readDumpJson(file, options);
        if (!d) {
            ADD_FAILURE() << d.error().format();
            return;
        }
        m_dump = *d;
    }

    bool ok() const { return m_dump != nullptr; }
    const dump::DumpFile& file() const { return *m_dump; }

    std::vector<std::string> keys() const
    {
        std::vector<std::string> out;
        if (m_dump) {
            for (const auto& e : m_dump->entries)
                out.emplace_back(e.key);
        }
        return out;
    }

    /// The entry's value; an invalid JsonValue when absent.
    dump::JsonValue entry(const std::string& key) const
    {
        if (!m_dump)
            return {};
        const dump::Entry* e = m_dump->find(key);
        return e ? e->value : dump::JsonValue();
    }

private:
    std::shared_ptr<const dump::DumpFile> m_dump;
};

inline bool hasMember(dump::JsonValue v, std::string_view key) { return v.valid() && v.find(key).has_value(); }

} // namespace probescope::testing
