// SPDX-License-Identifier: Apache-2.0
// Helpers of the collection tests: config files, and reading dumps back with ProbeScope's own readers
// (the oracle the collector is written for). Temporary folders: tests/core/tempdir.h, one per test.
#pragma once

#include "core/tempdir.h"
#include "core/dump/dumpfile.h"
#include "core/dump/jsondocument.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <system_error>
#include <string>
#include <vector>

namespace probescope::testing {

/// tests/core's TempDir for parameterised tests: their names hold a '/', so the folder lies in one named
/// after the test, which is removed as well once empty.
class ParamTempDir
{
public:
    ParamTempDir() { m_dir.emplace(); }
    ~ParamTempDir()
    {
        const std::filesystem::path parent = m_dir->path().parent_path();
        m_dir.reset();
        std::error_code ec;
        if (parent != std::filesystem::temp_directory_path())
            std::filesystem::remove(parent, ec); // only if empty: another process may use it
    }
    ParamTempDir(const ParamTempDir&) = delete;
    ParamTempDir& operator=(const ParamTempDir&) = delete;
    const std::filesystem::path& path() const { return m_dir->path(); }

private:
    std::optional<TempDir> m_dir;
};

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
