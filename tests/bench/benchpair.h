// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by probescope-benchgui and probescope-benchcli: the pair both measure. probescope-gendump (a
// realistic statistics-mode msprobe 1.2 dump with construct.json and stack.json) runs twice with one seed,
// then one bug is injected into the NPU side: the output Max and Norm of one Functional.gelu call in the
// middle of the run change in place. That gelu is then the only failing node and the first failure.
// A pair made once is kept (WORK/pair-N with bug.txt) and reused by every later run of either program.

#include "childrun.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::bench {

/// Changes the first digit of the value after `field` at or after `from`, keeping the length.
inline bool bumpDigit(std::string& text, std::size_t from, std::string_view field, std::size_t limit)
{
    const std::size_t at = text.find(field, from);
    if (at == std::string::npos || at > limit)
        return false;
    std::size_t i = at + field.size();
    while (i < text.size() && (text[i] == ' ' || text[i] == '-'))
        ++i;
    if (i >= text.size() || text[i] < '0' || text[i] > '9')
        return false;
    text[i] = text[i] == '9' ? '2' : '9';
    return true;
}

/// Injects the bug into the middle gelu call's output statistics; returns its key.
inline std::optional<std::string> injectBug(const std::filesystem::path& dumpJson)
{
    std::ifstream in(dumpJson, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    std::vector<std::size_t> gelus;
    for (std::size_t at = text.find("\"Functional.gelu."); at != std::string::npos;
         at = text.find("\"Functional.gelu.", at + 1)) {
        const std::size_t end = text.find('"', at + 1);
        if (text.compare(end - 8, 8, ".forward") == 0 && text.compare(end + 1, 2, ": ") == 0)
            gelus.push_back(at);
    }
    if (gelus.empty())
        return std::nullopt;
    const std::size_t at = gelus[gelus.size() / 2];
    const std::string key = text.substr(at + 1, text.find('"', at + 1) - at - 1);
    const std::size_t output = text.find("\"output\"", at);
    const std::size_t next = text.find("\n  \"", at + 1); // the next entry at indent 2
    if (output == std::string::npos || output > next || !bumpDigit(text, output, "\"Max\": ", next)
        || !bumpDigit(text, output, "\"Norm\": ", next))
        return std::nullopt;
    std::ofstream out(dumpJson, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out)
        return std::nullopt;
    return key;
}

/// WORK/pair-N/{npu,bench}/step0/rank0 with the bug injected (made on first use); the injected key, or
/// nullopt (with a message on stderr) when the pair cannot be made.
inline std::optional<std::string> makeBugPair(const std::string& gendump, std::uint64_t nodes,
                                              const std::filesystem::path& dir)
{
    const std::filesystem::path keyFile = dir / "bug.txt";
    if (std::filesystem::exists(keyFile)) {
        std::ifstream in(keyFile);
        std::string key;
        std::getline(in, key);
        if (!key.empty())
            return key;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    for (const char* side : { "npu", "bench" }) {
        const ChildRun run = runChild({ gendump, "--entries", std::to_string(nodes), "--seed", "1", "--no-nan",
                                        "--out", (dir / side).string() });
        if (!run.ok()) {
            std::fprintf(stderr, "%s failed (status %d)\n", gendump.c_str(), run.status);
            return std::nullopt;
        }
    }
    auto key = injectBug(dir / "npu" / "step0" / "rank0" / "dump.json");
    if (key)
        std::ofstream(keyFile) << *key << '\n';
    else
        std::fprintf(stderr, "no Functional.gelu forward call to inject the bug into in %s\n", dir.c_str());
    return key;
}

} // namespace probescope::bench
