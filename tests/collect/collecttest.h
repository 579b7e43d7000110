// SPDX-License-Identifier: Apache-2.0
// Helpers of the collection tests: temporary folders, config files, and reading dumps back with
// ProbeScope's own readers (the oracle the collector is written for).
#pragma once

#include "dump/dumpfile.h"
#include "dump/jsondocument.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace probescope::testing {

/// A fresh folder named after the running test, removed afterwards.
class TempDir
{
public:
    TempDir()
    {
        static int counter = 0; // several folders in one test
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = std::filesystem::temp_directory_path()
            / ("ps-collect-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name() + "-"
               + std::to_string(counter++));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() { std::filesystem::remove_all(m_path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

private:
    std::filesystem::path m_path;
};

inline std::string readAll(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void writeFile(const std::filesystem::path& p, const std::string& text)
{
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
