// SPDX-License-Identifier: Apache-2.0
#include "core/dump/entryname.h"

#include <gtest/gtest.h>

using namespace probescope::dump;

TEST(EntryName, ParsesApiKeys)
{
    const EntryName n = parseEntryName("Functional.conv2d.0.forward");
    EXPECT_EQ(n.kind, EntryKind::Api);
    EXPECT_EQ(n.direction, Direction::Forward);
    EXPECT_EQ(n.prefix, "Functional");
    EXPECT_EQ(n.opName, "conv2d");
    EXPECT_EQ(n.callIndex, 0);

    const EntryName add = parseEntryName("Tensor.__add__.13.backward");
    EXPECT_EQ(add.kind, EntryKind::Api);
    EXPECT_EQ(add.direction, Direction::Backward);
    EXPECT_EQ(add.opName, "__add__");
    EXPECT_EQ(add.callIndex, 13);

    EXPECT_EQ(parseEntryName("Distributed.all_reduce.2.forward").prefix, "Distributed");
    EXPECT_EQ(parseEntryName("NPU.npu_fusion_attention.0.backward").opName, "npu_fusion_attention");
    EXPECT_EQ(parseEntryName("Aten.mm.default.4.forward").opName, "mm.default");
    EXPECT_EQ(parseEntryName("Mint.add.0.forward").kind, EntryKind::Api);
}

TEST(EntryName, ParsesModuleKeysWithIndexAfterDirection)
{
    const EntryName m = parseEntryName("Module.conv.conv1.Conv2d.forward.0");
    EXPECT_EQ(m.kind, EntryKind::Module);
    EXPECT_EQ(m.direction, Direction::Forward);
    EXPECT_EQ(m.opName, "conv.conv1.Conv2d");
    EXPECT_EQ(m.modulePath, "conv.conv1");
    EXPECT_EQ(m.moduleClass, "Conv2d");
    EXPECT_EQ(m.callIndex, 0);
    EXPECT_EQ(m.stem(), "Module.conv.conv1.Conv2d");

    const EntryName cell = parseEntryName("Cell.0.conv2.Conv2d.backward.3");
    EXPECT_EQ(cell.kind, EntryKind::Module);
    EXPECT_EQ(cell.prefix, "Cell");
    EXPECT_EQ(cell.modulePath, "0.conv2");
    EXPECT_EQ(cell.callIndex, 3);

    const EntryName top = parseEntryName("Module.head.Linear.backward.0");
    EXPECT_EQ(top.modulePath, "head");
    EXPECT_EQ(top.moduleClass, "Linear");
}

TEST(EntryName, ParsesBothParametersGradForms)
{
    const EntryName oldForm = parseEntryName("Module.conv.conv1.Conv2d.parameters_grad");
    EXPECT_EQ(oldForm.kind, EntryKind::ParametersGrad);
    EXPECT_EQ(oldForm.opName, "conv.conv1.Conv2d");
    EXPECT_EQ(oldForm.callIndex, -1);

    const EntryName newForm = parseEntryName("Module.fc.Linear.parameters_grad.2");
    EXPECT_EQ(newForm.kind, EntryKind::ParametersGrad);
    EXPECT_EQ(newForm.moduleClass, "Linear");
    EXPECT_EQ(newForm.callIndex, 2);
}

TEST(EntryName, ParsesDebugKeys)
{
    const EntryName d = parseEntryName("dict_variable.0.debug");
    EXPECT_EQ(d.kind, EntryKind::Debug);
    EXPECT_EQ(d.opName, "dict_variable");
    EXPECT_EQ(d.callIndex, 0);
    EXPECT_FALSE(d.gradFlag);

    const EntryName g = parseEntryName("x.y_grad.3.debug");
    EXPECT_EQ(g.kind, EntryKind::Debug);
    EXPECT_EQ(g.opName, "x.y");
    EXPECT_TRUE(g.gradFlag);
    EXPECT_EQ(g.direction, Direction::Backward);
}

TEST(EntryName, ParsesLegacyUnderscoreKeys)
{
    const EntryName n = parseEntryName("Functional_batch_norm_2_forward");
    EXPECT_EQ(n.kind, EntryKind::Legacy);
    EXPECT_EQ(n.prefix, "Functional");
    EXPECT_EQ(n.opName, "batch_norm");
    EXPECT_EQ(n.callIndex, 2);

    const EntryName aten = parseEntryName("Aten__native_batch_norm_legit_functional.default_0_forward");
    EXPECT_EQ(aten.kind, EntryKind::Legacy);
    EXPECT_EQ(aten.prefix, "Aten");
    EXPECT_EQ(aten.opName, "_native_batch_norm_legit_functional.default");

    const EntryName add = parseEntryName("Tensor___add___1_backward");
    EXPECT_EQ(add.kind, EntryKind::Legacy);
    EXPECT_EQ(add.opName, "__add__");
    EXPECT_EQ(add.direction, Direction::Backward);
}

TEST(EntryName, UnrecognisedKeysAreUnknown)
{
    for (const char* key : { "", "foo", "a.b", "Functional.relu.x.forward", "Module.Linear.sideways.0", "x.-1.debug" })
        EXPECT_EQ(parseEntryName(key).kind, EntryKind::Unknown) << key;
}

TEST(EntryName, CounterpartKeys)
{
    EXPECT_EQ(counterpartKey(parseEntryName("Functional.relu.3.backward"), Direction::Forward),
              "Functional.relu.3.forward");
    EXPECT_EQ(counterpartKey(parseEntryName("Module.a.B.forward.1"), Direction::Backward), "Module.a.B.backward.1");
    EXPECT_EQ(counterpartKey(parseEntryName("Functional_conv2d_0_forward"), Direction::Backward),
              "Functional_conv2d_0_backward");
}
