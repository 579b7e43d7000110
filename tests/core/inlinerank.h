// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumpfile.h"
#include "core/dump/rankdump.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace probescope::testing {

/**
 * @brief A rank built in memory from (key, parent key) links, written to dump.json in the order given
 * ("" = a root): a tree for tests that need its shape and nothing else.
 */
inline std::shared_ptr<const dump::RankDump> inlineRank(const std::vector<std::pair<std::string, std::string>>& links)
{
    std::string json = R"({"task": "statistics", "level": "mix", "data": {)";
    for (std::size_t i = 0; i < links.size(); ++i)
        json += (i ? ", \"" : "\"") + links[i].first + "\": {}";
    json += "}}";
    auto dump = dump::parseDumpJson(json, "/inline/dump.json");
    EXPECT_TRUE(dump.ok()) << (dump.ok() ? "" : dump.error().format());
    auto rank = std::make_shared<dump::RankDump>();
    if (dump.ok())
        rank->dump = *dump;
    rank->construct.present = true;
    for (const auto& [child, parent] : links) {
        rank->construct.links.emplace_back(child, parent);
        rank->construct.parentOf[child] = parent;
    }
    return rank;
}

} // namespace probescope::testing
