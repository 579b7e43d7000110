// SPDX-License-Identifier: Apache-2.0
#pragma once

// Reading a whole job's --resume journals from a test, and making a job folder as the version before them left it
// (one marker file per pair), to check that --resume still reads those (docs/reliability.md, "--resume journals").
#include "tempdir.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace probescope::testing {

/// OUT/.probescope/journal/journal_{N}.jsonl, regular files only, by N.
inline std::vector<std::filesystem::path> journalFiles(const std::filesystem::path& out)
{
    std::vector<std::pair<std::uint64_t, std::filesystem::path>> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(out / ".probescope" / "journal", ec)) {
        const std::string name = e.path().filename().string();
        if (!e.is_symlink() && e.is_regular_file() && name.rfind("journal_", 0) == 0 && name.size() > 14
            && name.substr(name.size() - 6) == ".jsonl")
            found.emplace_back(std::stoull(name.substr(8, name.size() - 14)), e.path());
    }
    std::sort(found.begin(), found.end());
    std::vector<std::filesystem::path> files;
    for (auto& f : found)
        files.push_back(std::move(f.second));
    return files;
}

/// The lines of one journal, each parsed (a line that does not parse fails the test).
inline std::vector<nlohmann::json> journalEntries(const std::filesystem::path& journal)
{
    std::vector<nlohmann::json> entries;
    std::ifstream in(journal);
    for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << journal << ": " << line;
        entries.push_back(std::move(j));
    }
    return entries;
}

/// How many entries every journal of OUT holds for the pair "step0/rank0-rank0" (the key its lines begin with).
inline std::size_t entriesFor(const std::filesystem::path& out, const std::string& key)
{
    std::size_t n = 0;
    for (const auto& journal : journalFiles(out)) {
        for (const auto& j : journalEntries(journal))
            n += j.value("pair", std::string()) == key;
    }
    return n;
}

/// OUT as the version before the journal left it: each pair's latest entry becomes its marker file
/// OUT/{step}/.probescope/pair_{pair}.json (the entry without "pair", as that version dumped it); no journal remains.
inline void journalsToOldMarkers(const std::filesystem::path& out)
{
    for (const auto& journal : journalFiles(out)) {
        for (auto j : journalEntries(journal)) {
            const std::string key = j.at("pair");
            j.erase("pair");
            const auto slash = key.rfind('/');
            const std::filesystem::path folder = out / (slash == std::string::npos ? "" : key.substr(0, slash))
                / ".probescope";
            std::filesystem::create_directories(folder);
            std::ofstream(folder / ("pair_" + key.substr(slash + 1) + ".json"), std::ios::trunc) << j.dump();
        }
    }
    std::filesystem::remove_all(out / ".probescope" / "journal");
}

} // namespace probescope::testing
