// SPDX-License-Identifier: Apache-2.0
// The pickle machine's container opcodes (core/tensor/ptpickle.h) in both modes: LIST, DICT, APPENDS and SETITEMS
// on hand-written hostile streams. Each refusal names its opcode and the offset of that opcode in the stream; the
// two modes read these opcodes alike, so the same stream gives the same message in each.
#include "core/tensor/ptpickle.h"

#include <gtest/gtest.h>

#include <string>

using namespace probescope::tensor::pt;

namespace {

/// PROTO 2, the opcodes, STOP.
std::string stream(const std::string& ops)
{
    return std::string("\x80\x02", 2) + ops + ".";
}

MachineLimits mode(bool general)
{
    MachineLimits limits;
    limits.general = general;
    limits.maxObjects = 1000;
    limits.maxMarks = 100;
    limits.maxStack = 1000;
    return limits;
}

struct Refusal
{
    std::string id;
    std::string message;
    std::uint64_t offset = 0;
};

Refusal refusal(const std::string& ops, bool general)
{
    const std::string s = stream(ops);
    auto result = PickleMachine(s, mode(general)).run();
    EXPECT_FALSE(result) << "read: " << ops;
    if (result)
        return {};
    const PtFailure& f = result.failure();
    return { f.id, f.message, f.offset.value_or(~std::uint64_t { 0 }) };
}

} // namespace

TEST(PickleContainers, RefusalsNameTheOpcodeAndItsOffsetInBothModes)
{
    struct Case
    {
        std::string ops;
        std::string message;
        std::uint64_t offset;
    };
    // offsets: PROTO takes bytes 0-1, so the first opcode is at 2; MARK '(' and BININT1 'K' n are 1 and 2 bytes.
    const Case cases[] = {
        { "l", "LIST without a MARK", 2 },
        { "d", "DICT without a MARK", 2 },
        { "]e", "APPENDS without a MARK", 3 },
        { "}u", "SETITEMS without a MARK", 3 },
        { "(K\x01" "d", "DICT with an odd number of keys and values", 5 },
        { "(K\x01K\x02K\x03" "d", "DICT with an odd number of keys and values", 9 },
        { "(K\x01" "e", "APPENDS with no list below its MARK", 5 },
        { "K\x07(K\x01" "e", "APPENDS with no list below its MARK", 7 },
        { "}(K\x01" "e", "APPENDS with no list below its MARK", 6 },
        { "](K\x01K\x02u", "SETITEMS with no dict below its MARK", 8 },
        // the container is checked before the count: an odd SETITEMS on a list is "no dict"
        { "](K\x01u", "SETITEMS with no dict below its MARK", 6 },
        { "}(K\x01u", "SETITEMS with an odd number of keys and values", 6 },
        { "}(K\x01K\x02K\x03u", "SETITEMS with an odd number of keys and values", 10 },
    };
    for (const bool general : { false, true }) {
        for (const Case& c : cases) {
            const Refusal r = refusal(c.ops, general);
            EXPECT_EQ(r.id, "tensor.pt-corrupt") << c.message;
            EXPECT_EQ(r.message, c.message) << (general ? "checkpoint mode" : "tensor mode");
            EXPECT_EQ(r.offset, c.offset) << c.message << (general ? " (checkpoint mode)" : " (tensor mode)");
        }
    }
}

TEST(PickleContainers, WellFormedContainersAreRead)
{
    // LIST of two, DICT of one pair, APPENDS of two to an empty list, SETITEMS of two pairs to an empty dict,
    // and an empty APPENDS/SETITEMS (no items after the MARK), which leaves the container empty.
    const struct
    {
        std::string ops;
        Kind kind;
        std::int64_t nonEmpty;
        std::size_t items;
    } cases[] = {
        { "(K\x01K\x02l", Kind::List, 1, 2 },
        { "(K\x01K\x02" "d", Kind::Dict, 1, 2 },
        { "](K\x01K\x02" "e", Kind::List, 1, 2 },
        { "}(K\x01K\x02K\x03K\x04u", Kind::Dict, 1, 4 },
        { "](e", Kind::List, 0, 0 },
        { "}(u", Kind::Dict, 0, 0 },
    };
    for (const bool general : { false, true }) {
        for (const auto& c : cases) {
            const std::string s = stream(c.ops);
            auto result = PickleMachine(s, mode(general)).run();
            ASSERT_TRUE(result) << result.failure().message;
            const Value& top = result->values[result->top];
            EXPECT_EQ(top.kind, c.kind);
            // Checkpoint mode keeps the items; tensor mode only whether there were any.
            if (general)
                EXPECT_EQ(result->containers.at(top.first).size(), c.items) << c.items;
            else
                EXPECT_EQ(top.number, c.nonEmpty) << c.items;
        }
    }
}
