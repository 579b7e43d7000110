// SPDX-License-Identifier: Apache-2.0
// The item models of ui/models on the real msprobe fixtures: Qt's model contract (QAbstractItemModelTester),
// index round trips, colours and aggregation of known nodes, streamed updates, filters, search, overview.
#include "ui/models/comparetreemodel.h"
#include "ui/models/nodesearch.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/statuspalette.h"
#include "ui/models/treerowsmodel.h"
#include "ui/views/comparetreeview.h"
#include "ui/modeltestfailures.h"
#include "core/session/session.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QFont>
#include <QIcon>
#include <QHeaderView>
#include <QPaintEvent>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace probescope;
using probescope::ui::CompareTreeModel;
using probescope::ui::NodeSearch;
using probescope::ui::RankOverviewModel;
using probescope::ui::TreeRowsModel;
using probescope::ui::CompareTreeView;
using session::Status;
using tree::NodeId;

const char* const kFixtures[] = { "modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix" };
constexpr const char* kGelu = "Functional.gelu.0.forward";
constexpr const char* kPassingLinear = "Functional.linear.0.forward"; // tok_proj, before the bug
constexpr const char* kNpuOnly = "Tensor.reshape.0.forward";
constexpr const char* kGeluModule = "Module.block.ffn.FeedForward.forward.0";

using probescope::testing::ModelTestFailures;

struct Fixture
{
    session::SessionPlan plan;
    std::shared_ptr<const session::PairAnalysis> step0;
};

// Each fixture is analysed once per test program.
const Fixture& fixture(const std::string& name)
{
    static std::map<std::string, Fixture> cache;
    auto it = cache.find(name);
    if (it != cache.end())
        return it->second;
    const auto dir = probescope::testing::fixturesDir() / name;
    auto plan = session::planSession(dir / "npu", dir / "bench");
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().format());
    Fixture f;
    if (plan.ok()) {
        f.plan = *plan;
        const auto pairs = f.plan.pairsOfStep(0);
        EXPECT_EQ(pairs.size(), 1u);
        session::AnalysisOptions options;
        options.threads = 2;
        auto analysis = session::analysePair(f.plan.pairs.at(pairs.at(0)), options);
        EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().format());
        if (analysis.ok())
            f.step0 = *analysis;
    }
    return cache.emplace(name, std::move(f)).first->second;
}

NodeId nodeOf(const session::PairAnalysis& a, const char* key)
{
    auto id = a.skeleton->tree->find(key);
    EXPECT_TRUE(id.has_value()) << key;
    return id.value_or(NodeId {});
}

// Every index of a model, depth first, column 0.
void collect(const QAbstractItemModel& model, const QModelIndex& parent, std::vector<QModelIndex>& out)
{
    for (int r = 0; r < model.rowCount(parent); ++r) {
        const QModelIndex i = model.index(r, 0, parent);
        out.push_back(i);
        collect(model, i, out);
    }
}

// Own statuses with every third node set back to Pending, aggregated as core does: a state the
// stream can start from.
std::shared_ptr<session::NodeStatusTable> partiallyPending(const session::PairAnalysis& a, std::vector<NodeId>* reset)
{
    auto t = std::make_shared<session::NodeStatusTable>(*a.status);
    for (std::uint32_t i = 0; i < t->own.size(); i += 3) {
        if (t->own[i] != Status::Pending) {
            t->own[i] = Status::Pending;
            if (reset)
                reset->push_back(NodeId { i });
        }
    }
    session::aggregate(*t, *a.skeleton->tree);
    return t;
}

// Parameters: the fixture, and whether status changes are signalled in bulk (threshold 0) or row by row.
class ModelsOnFixture : public ::testing::TestWithParam<std::tuple<const char*, bool>>
{
protected:
    const char* name() const { return std::get<0>(GetParam()); }
    const session::PairAnalysis& analysis() const { return *fixture(name()).step0; }
    void SetUp() override { ASSERT_TRUE(fixture(name()).step0) << "fixture failed to analyse"; }
    void configure(CompareTreeModel& model) const
    {
        if (std::get<1>(GetParam()))
            model.setBulkThreshold(0);
    }

    /// A model's rows (TreeRowsModel) under QAbstractItemModelTester.
    struct TestedProxy
    {
        CompareTreeModel model;
        TreeRowsModel proxy;
        std::unique_ptr<QAbstractItemModelTester> tester;
    };
    std::unique_ptr<TestedProxy> testedProxy() const
    {
        auto t = std::make_unique<TestedProxy>();
        configure(t->model);
        t->proxy.setSourceModel(&t->model);
        t->tester = std::make_unique<QAbstractItemModelTester>(&t->proxy,
                                                               QAbstractItemModelTester::FailureReportingMode::Warning);
        return t;
    }
};

// ------------------------------------------------------------------------------------------------

TEST_P(ModelsOnFixture, TreeModelPassesModelTesterThroughEveryChange)
{
    ModelTestFailures failures;
    CompareTreeModel model;
    configure(model);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    const auto& a = analysis();
    model.setSkeleton(a.skeleton);
    model.setStatus(partiallyPending(a, nullptr));
    session::StatusUpdate update;
    for (std::uint32_t i = 0; i < a.status->own.size(); ++i) {
        update.nodes.push_back(i);
        update.own.push_back(a.status->own[i]);
    }
    model.applyUpdate(update);
    model.setStatus(a.status);
    model.setBands({ session::ColorBands::Scheme::ContinuousIndex, 0.1, 0.5 });
    model.setDarkPalette(true);
    model.setStatus(nullptr);
    model.clear();
    model.setSkeleton(a.skeleton);
    EXPECT_EQ(model.rowCount(), int(a.skeleton->tree->roots().size()));
}

TEST_P(ModelsOnFixture, IndexParentRoundTripsCoverTheTree)
{
    CompareTreeModel model;
    const auto& a = analysis();
    const tree::ConstructTree& t = *a.skeleton->tree;
    model.setSkeleton(a.skeleton);
    model.setStatus(a.status);
    std::vector<QModelIndex> all;
    collect(model, {}, all);
    ASSERT_EQ(all.size(), t.size());
    std::vector<bool> seen(t.size(), false);
    for (std::size_t k = 0; k < all.size(); ++k) {
        const QModelIndex& i = all[k];
        const NodeId id = model.nodeAt(i);
        ASSERT_TRUE(id.valid());
        ASSERT_LT(id.value, t.size());
        EXPECT_FALSE(seen[id.value]) << "node listed twice";
        seen[id.value] = true;
        EXPECT_EQ(model.indexOf(id), i);
        EXPECT_EQ(i.row(), int(t.node(id).row));
        EXPECT_EQ(model.displayOrder()[k], id) << "depth-first order is the display order";
        EXPECT_EQ(model.displayPosition(id), k);
        const QModelIndex p = model.parent(i);
        if (t.node(id).parent.valid()) {
            EXPECT_EQ(model.nodeAt(p), t.node(id).parent);
            EXPECT_EQ(model.index(i.row(), 0, p), i);
        } else {
            EXPECT_FALSE(p.isValid());
        }
        for (int c = 0; c < CompareTreeModel::ColumnCount; ++c) {
            const QModelIndex s = i.siblingAtColumn(c);
            EXPECT_EQ(model.nodeAt(s), id);
            EXPECT_EQ(model.parent(s), p);
        }
        EXPECT_EQ(model.data(i, CompareTreeModel::NodeIdRole).toUInt(), id.value);
        EXPECT_EQ(model.data(i, CompareTreeModel::KeyRole).toString().toStdString(), std::string(t.node(id).key));
        EXPECT_EQ(model.data(i, CompareTreeModel::ExecutionIndexRole).toUInt(), t.node(id).executionIndex);
    }
    EXPECT_FALSE(model.indexOf(NodeId {}).isValid());
    EXPECT_FALSE(model.indexOf(NodeId { std::uint32_t(t.size()) }).isValid());
    EXPECT_FALSE(model.index(int(t.roots().size()), 0).isValid());
}

TEST_P(ModelsOnFixture, KnownNodesHaveTheirStatusColourAndText)
{
    CompareTreeModel model;
    configure(model);
    const auto& a = analysis();
    model.setSkeleton(a.skeleton);
    const QModelIndex gelu = model.indexOf(nodeOf(a, kGelu));
    ASSERT_TRUE(gelu.isValid());
    // Before results, everything is pending.
    EXPECT_EQ(model.data(gelu, CompareTreeModel::OwnStatusRole).toInt(), int(Status::Pending));
    EXPECT_EQ(model.counts()[size_t(Status::Pending)], a.skeleton->tree->size());
    EXPECT_EQ(model.data(gelu.siblingAtColumn(CompareTreeModel::StatusColumn)).toString(), QString("Pending"));

    model.setStatus(a.status);
    // The bug: statistics flags it yellow (a warning), tensor and md5 red.
    const bool statistics = std::string(name()) == "modelA_statistics_mix";
    const Status geluStatus = statistics ? Status::Warning : Status::Error;
    EXPECT_EQ(model.data(gelu, CompareTreeModel::OwnStatusRole).toInt(), int(geluStatus));
    EXPECT_EQ(model.data(gelu, Qt::BackgroundRole).value<QColor>(), QColor(statistics ? "#FFDC7F" : "#FF704D"));
    EXPECT_EQ(model.data(gelu.siblingAtColumn(CompareTreeModel::StatusColumn)).toString(),
              QString(statistics ? "Warning" : "Error"));
    EXPECT_FALSE(model.data(gelu, Qt::DecorationRole).value<QIcon>().isNull());
    EXPECT_EQ(model.data(gelu, CompareTreeModel::KindRole).toInt(), int(CompareTreeModel::NodeKind::Api));
    EXPECT_EQ(model.data(gelu, CompareTreeModel::DirectionRole).toInt(), int(dump::Direction::Forward));
    EXPECT_TRUE(model.data(gelu, Qt::ToolTipRole).toString().contains(kGelu));

    const QModelIndex linear = model.indexOf(nodeOf(a, kPassingLinear));
    EXPECT_EQ(model.data(linear, CompareTreeModel::OwnStatusRole).toInt(), int(Status::Pass));
    EXPECT_EQ(model.data(linear, Qt::BackgroundRole).value<QColor>(), QColor("#FFFCF3"));
    EXPECT_EQ(model.data(linear.siblingAtColumn(CompareTreeModel::StatusColumn)).toString(), QString("Pass"));

    const QModelIndex reshape = model.indexOf(nodeOf(a, kNpuOnly));
    EXPECT_EQ(model.data(reshape, CompareTreeModel::OwnStatusRole).toInt(), int(Status::Unmatched));
    EXPECT_EQ(model.data(reshape, Qt::BackgroundRole).value<QColor>(), QColor("#C7C7C7"));
    EXPECT_EQ(model.data(reshape.siblingAtColumn(CompareTreeModel::StatusColumn)).toString(), QString("Unmatched"));

    // Text must stay readable on every fill, light and dark.
    for (const bool dark : { false, true }) {
        model.setDarkPalette(dark);
        for (const QModelIndex& i : { gelu, linear, reshape }) {
            const QColor bg = model.data(i, Qt::BackgroundRole).value<QColor>();
            const QColor fg = model.data(i, Qt::ForegroundRole).value<QColor>();
            EXPECT_GT(std::abs(bg.lightness() - fg.lightness()), 110) << "dark=" << dark;
            EXPECT_EQ(bg, ui::statuspalette::fill(Status(model.data(i, CompareTreeModel::BandRole).toInt()), dark));
        }
    }
    EXPECT_NE(ui::statuspalette::fill(Status::Error, true), ui::statuspalette::fill(Status::Error, false));
}

TEST_P(ModelsOnFixture, ModulesAggregateTheirDescendants)
{
    CompareTreeModel model;
    configure(model);
    const auto& a = analysis();
    const tree::ConstructTree& t = *a.skeleton->tree;
    model.setSkeleton(a.skeleton);
    model.setStatus(a.status);
    // Independent oracle: walk each node's subtree.
    std::array<std::uint32_t, 6> counts {};
    for (std::uint32_t n = 0; n < t.size(); ++n) {
        ++counts[size_t(model.ownStatus(NodeId { n }))];
        std::uint32_t failing = 0;
        Status worst = model.ownStatus(NodeId { n });
        std::vector<NodeId> stack(t.children(NodeId { n }).begin(), t.children(NodeId { n }).end());
        while (!stack.empty()) {
            const NodeId d = stack.back();
            stack.pop_back();
            failing += session::isFailing(model.ownStatus(d)) ? 1 : 0;
            worst = session::worse(worst, model.ownStatus(d));
            stack.insert(stack.end(), t.children(d).begin(), t.children(d).end());
        }
        ASSERT_EQ(model.failingBelow(NodeId { n }), failing) << t.node(NodeId { n }).key;
        ASSERT_EQ(model.subtreeStatus(NodeId { n }), worst) << t.node(NodeId { n }).key;
    }
    EXPECT_EQ(model.counts(), counts);

    const NodeId ffn = nodeOf(a, kGeluModule);
    const QModelIndex ffnIndex = model.indexOf(ffn);
    ASSERT_GE(model.failingBelow(ffn), 1u);
    const QString text = model.data(ffnIndex.siblingAtColumn(CompareTreeModel::StatusColumn)).toString();
    EXPECT_TRUE(text.startsWith(ui::statuspalette::label(model.ownStatus(ffn)))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString("\u00b7 %1 failing below").arg(model.failingBelow(ffn)))) << text.toStdString();
    EXPECT_EQ(model.data(ffnIndex.siblingAtColumn(CompareTreeModel::FailingBelowColumn)).toUInt(),
              model.failingBelow(ffn));
    EXPECT_EQ(model.data(ffnIndex, CompareTreeModel::KindRole).toInt(), int(CompareTreeModel::NodeKind::Module));
    // The row is painted by the module's own status; the icon flags the worse status below.
    EXPECT_EQ(model.data(ffnIndex, Qt::BackgroundRole).value<QColor>(),
              ui::statuspalette::fill(model.ownStatus(ffn), false));
    EXPECT_TRUE(session::isFailing(model.subtreeStatus(ffn)));
}

TEST_P(ModelsOnFixture, StreamedUpdatesEqualAFullStatus)
{
    const auto& a = analysis();
    const tree::ConstructTree& t = *a.skeleton->tree;
    std::vector<NodeId> reset;
    auto partial = partiallyPending(a, &reset);
    ASSERT_FALSE(reset.empty());

    CompareTreeModel streamed;
    configure(streamed);
    streamed.setSkeleton(a.skeleton);
    streamed.setStatus(a.status); // metrics as in the final table
    streamed.setStatus(partial);
    // partial shares the final metrics, so only statuses differ from here on.
    QSignalSpy changes(&streamed, &QAbstractItemModel::dataChanged);
    QSignalSpy statusSignals(&streamed, &CompareTreeModel::statusesChanged);
    // Three batches, the last also repeating a node.
    for (std::size_t b = 0; b < 3; ++b) {
        session::StatusUpdate u;
        for (std::size_t k = b; k < reset.size(); k += 3) {
            u.nodes.push_back(reset[k].value);
            u.own.push_back(a.status->own[reset[k].value]);
        }
        if (b == 2) {
            u.nodes.push_back(reset[0].value);
            u.own.push_back(a.status->own[reset[0].value]);
        }
        streamed.applyUpdate(u);
    }
    EXPECT_EQ(statusSignals.count(), 3);
    // Fewer signals than nodes touched: runs of siblings are merged.
    EXPECT_GT(changes.count(), 0);
    EXPECT_LE(changes.count(), int(t.size()));

    CompareTreeModel full;
    configure(full);
    full.setSkeleton(a.skeleton);
    full.setStatus(a.status);
    EXPECT_EQ(streamed.counts(), full.counts());
    std::vector<QModelIndex> all;
    collect(streamed, {}, all);
    const int roles[] = { Qt::DisplayRole, Qt::BackgroundRole, Qt::ForegroundRole, Qt::ToolTipRole,
                          CompareTreeModel::OwnStatusRole, CompareTreeModel::SubtreeStatusRole,
                          CompareTreeModel::FailingBelowRole, CompareTreeModel::BandRole };
    for (const QModelIndex& i : all) {
        const NodeId id = streamed.nodeAt(i);
        ASSERT_EQ(streamed.ownStatus(id), full.ownStatus(id));
        ASSERT_EQ(streamed.subtreeStatus(id), full.subtreeStatus(id)) << t.node(id).key;
        ASSERT_EQ(streamed.failingBelow(id), full.failingBelow(id)) << t.node(id).key;
        for (int c = 0; c < CompareTreeModel::ColumnCount; ++c) {
            for (const int role : roles)
                ASSERT_EQ(streamed.data(i.siblingAtColumn(c), role), full.data(full.indexOf(id, c), role))
                    << t.node(id).key << " column " << c << " role " << role;
        }
        const QIcon si = streamed.data(i, Qt::DecorationRole).value<QIcon>();
        const QIcon fi = full.data(full.indexOf(id), Qt::DecorationRole).value<QIcon>();
        ASSERT_EQ(si.cacheKey() == 0, fi.cacheKey() == 0);
        ASSERT_EQ(si.pixmap(16).toImage(), fi.pixmap(16).toImage()) << t.node(id).key;
    }
}

TEST_P(ModelsOnFixture, OneUpdateSignalsOnlyTheNodeAndItsAncestors)
{
    const auto& a = analysis();
    const tree::ConstructTree& t = *a.skeleton->tree;
    CompareTreeModel model;
    model.setSkeleton(a.skeleton);
    model.setStatus(a.status);
    const NodeId linear = nodeOf(a, kPassingLinear);
    std::vector<NodeId> chain;
    for (NodeId n = linear; n.valid(); n = t.node(n).parent)
        chain.push_back(n);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    model.applyUpdate({ { linear.value }, { Status::Error } });
    ASSERT_GE(changes.count(), 1);
    EXPECT_LE(changes.count(), int(chain.size()));
    for (const auto& args : changes) {
        const auto from = args.at(0).value<QModelIndex>();
        const auto to = args.at(1).value<QModelIndex>();
        EXPECT_EQ(from, to.siblingAtColumn(0));
        EXPECT_NE(std::find(chain.begin(), chain.end(), model.nodeAt(from)), chain.end());
    }
    for (std::size_t k = 1; k < chain.size(); ++k) {
        EXPECT_EQ(model.failingBelow(chain[k]), a.status->failingBelow[chain[k].value] + 1);
        EXPECT_EQ(model.subtreeStatus(chain[k]), Status::Error);
    }
    EXPECT_EQ(model.counts()[size_t(Status::Error)], a.status->counts[size_t(Status::Error)] + 1);
    // An unchanged status emits nothing.
    changes.clear();
    model.applyUpdate({ { linear.value }, { Status::Error } });
    EXPECT_EQ(changes.count(), 0);
    // Back to pass restores the final table exactly.
    model.applyUpdate({ { linear.value }, { Status::Pass } });
    for (const NodeId n : chain) {
        EXPECT_EQ(model.failingBelow(n), a.status->failingBelow[n.value]);
        EXPECT_EQ(model.subtreeStatus(n), a.status->subtree[n.value]);
    }
}

TEST_P(ModelsOnFixture, RecolourSignalsOnlyWhatChanged)
{
    const auto& a = analysis();
    CompareTreeModel model;
    model.setSkeleton(a.skeleton);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    model.setStatus(a.status);
    const int first = changes.count();
    EXPECT_GT(first, 0);
    changes.clear();
    model.setStatus(a.status); // same table: nothing to repaint
    EXPECT_EQ(changes.count(), 0);
    model.setBands(session::ColorBands {}); // the default again
    EXPECT_EQ(changes.count(), 0);
    // Colours only: one all-columns signal per top-level row (views repaint everything), and the
    // appearanceChanged notice; never a signal per node.
    QSignalSpy appearance(&model, &CompareTreeModel::appearanceChanged);
    std::vector<Status> before(model.nodeCount());
    for (std::uint32_t n = 0; n < model.nodeCount(); ++n)
        before[n] = model.band(NodeId { n });
    model.setBands({ session::ColorBands::Scheme::ContinuousIndex, 0.0, 2.0 });
    std::size_t moved = 0;
    for (std::uint32_t n = 0; n < model.nodeCount(); ++n)
        moved += before[n] != model.band(NodeId { n }) ? 1 : 0;
    EXPECT_GT(moved, 0u);
    EXPECT_EQ(appearance.count(), 1);
    EXPECT_EQ(changes.count(), int(a.skeleton->tree->roots().size()));
    for (int k = 0; k < changes.count(); ++k) {
        const auto& args = changes.at(k);
        const auto from = args.at(0).value<QModelIndex>();
        const auto to = args.at(1).value<QModelIndex>();
        EXPECT_FALSE(from.parent().isValid());
        EXPECT_EQ(from.row(), k);
        EXPECT_EQ(to.row(), k);
        EXPECT_EQ(from.column(), 0);
        EXPECT_EQ(to.column(), CompareTreeModel::ColumnCount - 1);
        const auto roles = args.at(2).value<QList<int>>();
        EXPECT_TRUE(roles.contains(Qt::BackgroundRole));
        EXPECT_FALSE(roles.contains(Qt::DisplayRole)) << "nothing a filter depends on";
    }
    const NodeId gelu = nodeOf(a, kGelu);
    if (!std::isnan(a.status->metrics[gelu.value].index)) {
        EXPECT_EQ(model.band(gelu), Status::Warning);
    }
    // Bands that move no node signal nothing.
    changes.clear();
    model.setBands({ session::ColorBands::Scheme::ContinuousIndex, 0.0, 2.5 });
    EXPECT_EQ(changes.count(), 0);
    model.setDarkPalette(true);
    EXPECT_EQ(changes.count(), int(a.skeleton->tree->roots().size()));
    EXPECT_EQ(appearance.count(), 2);
}

TEST_P(ModelsOnFixture, ColumnsOfTheMode)
{
    const auto& a = analysis();
    CompareTreeModel model;
    model.setSkeleton(a.skeleton);
    ASSERT_TRUE(model.mode().has_value());
    EXPECT_EQ(*model.mode(), a.table->mode);
    // A caller that knows the mode skips the detection; it is taken as given.
    CompareTreeModel given;
    given.setSkeleton(a.skeleton, compare::CompareMode::Md5);
    EXPECT_EQ(given.mode(), compare::CompareMode::Md5);
    const QList<int> columns = CompareTreeModel::columnsFor(a.table->mode);
    EXPECT_TRUE(columns.contains(CompareTreeModel::NameColumn));
    EXPECT_TRUE(columns.contains(CompareTreeModel::StatusColumn));
    switch (a.table->mode) {
    case compare::CompareMode::RealData:
        EXPECT_TRUE(columns.contains(CompareTreeModel::CosineColumn));
        EXPECT_FALSE(columns.contains(CompareTreeModel::NormRelErrColumn));
        break;
    case compare::CompareMode::Summary:
        EXPECT_FALSE(columns.contains(CompareTreeModel::CosineColumn));
        EXPECT_TRUE(columns.contains(CompareTreeModel::NormRelErrColumn));
        break;
    case compare::CompareMode::Md5:
        EXPECT_FALSE(columns.contains(CompareTreeModel::CosineColumn));
        EXPECT_FALSE(columns.contains(CompareTreeModel::MaxAbsErrColumn));
        break;
    }
    model.setStatus(a.status);
    const QModelIndex gelu = model.indexOf(nodeOf(a, kGelu));
    if (a.table->mode == compare::CompareMode::RealData) {
        // fixture README: gelu output Cosine 0.879928374486, MaxAbsErr 1.163048326969
        EXPECT_EQ(model.data(gelu.siblingAtColumn(CompareTreeModel::CosineColumn)).toString(), QString("0.879928"));
        EXPECT_EQ(model.data(gelu.siblingAtColumn(CompareTreeModel::MaxAbsErrColumn)).toString(), QString("1.16305"));
    }
    for (int c = 0; c < CompareTreeModel::ColumnCount; ++c) {
        if (!columns.contains(c)) {
            EXPECT_FALSE(model.data(gelu.siblingAtColumn(c)).isValid()) << "column " << c;
        }
    }
}

TEST_P(ModelsOnFixture, NextAndPreviousFailingFollowDisplayOrder)
{
    const auto& a = analysis();
    CompareTreeModel model;
    configure(model);
    model.setSkeleton(a.skeleton);
    EXPECT_FALSE(model.nextFailing(NodeId {}).valid()) << "nothing fails while pending";
    model.setStatus(a.status);
    const auto failing = model.failingNodesInDisplayOrder();
    ASSERT_FALSE(failing.empty());
    for (std::size_t k = 1; k < failing.size(); ++k)
        EXPECT_LT(model.displayPosition(failing[k - 1]), model.displayPosition(failing[k]));
    for (const NodeId n : failing)
        EXPECT_TRUE(session::isFailing(model.ownStatus(n)));
    EXPECT_EQ(std::count_if(model.displayOrder().begin(), model.displayOrder().end(),
                            [&](NodeId n) { return session::isFailing(model.ownStatus(n)); }),
              std::ptrdiff_t(failing.size()));

    NodeId at = model.nextFailing(NodeId {});
    for (std::size_t k = 0; k < failing.size(); ++k) {
        ASSERT_EQ(at, failing[k]);
        at = model.nextFailing(at);
    }
    EXPECT_EQ(at, failing.front()) << "wraps around";
    EXPECT_FALSE(model.nextFailing(failing.back(), false).valid());
    at = model.previousFailing(NodeId {});
    for (std::size_t k = failing.size(); k-- > 0;) {
        ASSERT_EQ(at, failing[k]);
        at = model.previousFailing(at);
    }
    EXPECT_EQ(at, failing.back());
    EXPECT_FALSE(model.previousFailing(failing.front(), false).valid());
    // From a passing node, the next failing one is the first failing node after it.
    const NodeId linear = nodeOf(a, kPassingLinear);
    const NodeId next = model.nextFailing(linear);
    EXPECT_GT(model.displayPosition(next), model.displayPosition(linear));
}

// Invariants of a recursive filter: shown rows are accepted or lead to an accepted descendant;
// every accepted node is shown.
void checkFilter(const TreeRowsModel& proxy, const CompareTreeModel& model, const char* what)
{
    std::vector<QModelIndex> shown;
    collect(proxy, {}, shown);
    std::vector<bool> visible(model.nodeCount(), false);
    for (const QModelIndex& i : shown) {
        const NodeId id = model.nodeAt(proxy.mapToSource(i));
        ASSERT_TRUE(id.valid()) << what;
        visible[id.value] = true;
    }
    const tree::ConstructTree& t = *model.tree();
    std::vector<bool> acceptedBelow(t.size(), false);
    for (std::uint32_t n = 0; n < t.size(); ++n) {
        if (!proxy.acceptsNode(NodeId { n }))
            continue;
        ASSERT_TRUE(visible[n]) << what << ": accepted but hidden: " << t.node(NodeId { n }).key;
        for (NodeId p = NodeId { n }; p.valid(); p = t.node(p).parent)
            acceptedBelow[p.value] = true;
    }
    for (std::uint32_t n = 0; n < t.size(); ++n) {
        if (visible[n]) {
            ASSERT_TRUE(acceptedBelow[n]) << what << ": shown without reason: " << t.node(NodeId { n }).key;
        }
    }
}

TEST_P(ModelsOnFixture, FilterProxyPassesModelTesterWithEachFilter)
{
    ModelTestFailures failures;
    const auto& a = analysis();
    const auto tested = testedProxy();
    CompareTreeModel& model = tested->model;
    TreeRowsModel& proxy = tested->proxy;
    model.setSkeleton(a.skeleton);
    model.setStatus(a.status);
    const std::size_t total = model.nodeCount();
    std::vector<QModelIndex> shown;
    collect(proxy, {}, shown);
    EXPECT_EQ(shown.size(), a.skeleton->tree->roots().size()) << "a new tree shows its roots, collapsed";
    // Expanded, every shown node has a row (mapFromNode is valid exactly for the shown nodes).
    proxy.expandAll();
    shown.clear();
    collect(proxy, {}, shown);
    EXPECT_EQ(shown.size(), total);

    for (int s = 0; s < 6; ++s) {
        proxy.setStatusMask(TreeRowsModel::statusBit(Status(s)));
        checkFilter(proxy, model, session::statusName(Status(s)));
    }
    proxy.setStatusMask(TreeRowsModel::statusBit(Status::Error) | TreeRowsModel::statusBit(Status::Warning));
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kGelu)).isValid());
    EXPECT_FALSE(proxy.mapFromNode(nodeOf(a, kPassingLinear)).isValid());
    checkFilter(proxy, model, "failing");
    // Statuses changing under an active filter (streamed verdicts) re-filter the changed rows.
    model.setStatus(nullptr);
    shown.clear();
    collect(proxy, {}, shown);
    EXPECT_TRUE(shown.empty()) << "nothing fails while pending";
    model.setStatus(a.status);
    checkFilter(proxy, model, "failing after refresh");
    model.applyUpdate({ { nodeOf(a, kPassingLinear).value }, { Status::Warning } });
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kPassingLinear)).isValid());
    checkFilter(proxy, model, "after update");
    model.setStatus(a.status);
    proxy.clearFilters();

    using D = TreeRowsModel::DirectionFilter;
    using K = TreeRowsModel::KindFilter;
    for (const D d : { D::Forward, D::Backward }) {
        proxy.setDirectionFilter(d);
        checkFilter(proxy, model, d == D::Forward ? "forward" : "backward");
    }
    proxy.setDirectionFilter(D::Backward);
    EXPECT_FALSE(proxy.mapFromNode(nodeOf(a, kGelu)).isValid());
    proxy.setDirectionFilter(D::All);
    for (const K k : { K::Module, K::Api }) {
        proxy.setKindFilter(k);
        checkFilter(proxy, model, k == K::Module ? "modules" : "apis");
    }
    proxy.setKindFilter(K::Module);
    EXPECT_FALSE(proxy.acceptsNode(nodeOf(a, kGelu)));
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kGeluModule)).isValid());
    proxy.setKindFilter(K::All);

    proxy.setNameFilter("GELU");
    checkFilter(proxy, model, "name gelu");
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kGelu)).isValid());
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kGeluModule)).isValid()) << "ancestors stay";
    EXPECT_FALSE(proxy.mapFromNode(nodeOf(a, kPassingLinear)).isValid());
    proxy.setNameFilter("GELU", false, Qt::CaseSensitive);
    EXPECT_FALSE(proxy.mapFromNode(nodeOf(a, kGelu)).isValid());
    proxy.setNameFilter(R"(^Functional\.(gelu|linear)\.0\.forward$)", true);
    checkFilter(proxy, model, "regex");
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kGelu)).isValid());
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kPassingLinear)).isValid());
    EXPECT_TRUE(proxy.nameFilterError().isEmpty());
    proxy.setNameFilter("linear(", true);
    EXPECT_FALSE(proxy.nameFilterError().isEmpty());
    EXPECT_EQ(proxy.rowCount(), 0);
    // Combined: failing forward APIs named gelu.
    proxy.setNameFilter("gelu");
    proxy.setKindFilter(K::Api);
    proxy.setDirectionFilter(D::Forward);
    proxy.setStatusMask(TreeRowsModel::statusBit(Status::Error) | TreeRowsModel::statusBit(Status::Warning));
    checkFilter(proxy, model, "combined");
    EXPECT_TRUE(proxy.mapFromNode(nodeOf(a, kGelu)).isValid());
    proxy.clearFilters();
    EXPECT_FALSE(proxy.isFiltering());
    shown.clear();
    collect(proxy, {}, shown);
    EXPECT_EQ(shown.size(), total);
}

TEST_P(ModelsOnFixture, ProxyInATreeViewSurvivesStreaming)
{
    ModelTestFailures failures;
    const auto& a = analysis();
    const auto tested = testedProxy();
    CompareTreeModel& model = tested->model;
    TreeRowsModel& proxy = tested->proxy;
    CompareTreeView view;
    view.setModel(&proxy);
    view.resize(800, 600);
    model.setSkeleton(a.skeleton);
    view.expandAll();
    view.show();
    proxy.setStatusMask(TreeRowsModel::kAllStatuses & ~TreeRowsModel::statusBit(Status::Pass));
    std::vector<NodeId> reset;
    model.setStatus(partiallyPending(a, &reset));
    session::StatusUpdate u;
    for (const NodeId n : reset) {
        u.nodes.push_back(n.value);
        u.own.push_back(a.status->own[n.value]);
    }
    model.applyUpdate(u);
    view.expandAll();
    checkFilter(proxy, model, "streamed under a view");
    const QModelIndex gelu = proxy.mapFromNode(nodeOf(a, kGelu));
    ASSERT_TRUE(gelu.isValid());
    EXPECT_TRUE(view.visualRect(gelu).isValid());
}

// Records the regions a widget is asked to paint.
class PaintSpy : public QObject
{
public:
    QRegion painted;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Paint)
            painted += static_cast<QPaintEvent*>(event)->region();
        return QObject::eventFilter(watched, event);
    }
};

TEST_P(ModelsOnFixture, TreeViewKeepsTheTopNodeAndTheCurrentRowInPlace)
{
    ModelTestFailures failures;
    const auto& a = analysis();
    const auto tested = testedProxy();
    CompareTreeModel& model = tested->model;
    TreeRowsModel& rows = tested->proxy;
    CompareTreeView view;
    view.setModel(&rows);
    model.setSkeleton(a.skeleton);
    model.setStatus(a.status);
    view.expandAll();
    view.resize(600, view.verticalHeader()->defaultSectionSize() * 6 + view.horizontalHeader()->height() + 4);
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    // A forward node half-way down, with enough forward rows below it to fill the viewport.
    std::vector<NodeId> forward;
    for (const NodeId n : model.displayOrder()) {
        if (model.tree()->node(n).name.direction == dump::Direction::Forward)
            forward.push_back(n);
    }
    ASSERT_GT(forward.size(), 20u);
    const NodeId top = forward[forward.size() / 2];
    view.verticalScrollBar()->setValue(rows.mapFromNode(top).row());
    ASSERT_EQ(rows.nodeAtRow(view.rowAt(0)), top);
    // A filter that keeps it (one layout change) keeps it on top.
    rows.setDirectionFilter(TreeRowsModel::DirectionFilter::Forward);
    EXPECT_EQ(rows.nodeAtRow(view.rowAt(0)), top) << "the top node stays on top";
    rows.clearFilters();
    EXPECT_EQ(rows.nodeAtRow(view.rowAt(0)), top);

    // Collapsing a module above the viewport (rows removed above) keeps it on top too.
    const tree::ConstructTree& t = *model.tree();
    auto isAncestorOfTop = [&](NodeId n) {
        for (NodeId p = t.node(top).parent; p.valid(); p = t.node(p).parent) {
            if (p == n)
                return true;
        }
        return false;
    };
    NodeId above;
    for (const NodeId n : model.displayOrder()) {
        if (n == top)
            break;
        if (t.node(n).childCount > 0 && !isAncestorOfTop(n) && rows.mapFromNode(n).isValid())
            above = n;
    }
    ASSERT_TRUE(above.valid()) << "a module above the top node";
    const int rowBefore = rows.mapFromNode(top).row();
    rows.setExpanded(above, false);
    EXPECT_LT(rows.mapFromNode(top).row(), rowBefore) << "rows above it went";
    EXPECT_EQ(rows.nodeAtRow(view.rowAt(0)), top);
    rows.setExpanded(std::span<const NodeId>(&above, 1), true); // the layout-change path
    EXPECT_EQ(rows.mapFromNode(top).row(), rowBefore);
    EXPECT_EQ(rows.nodeAtRow(view.rowAt(0)), top);

    // The current row, on screen, keeps its place in the viewport.
    const NodeId current = rows.nodeAtRow(view.rowAt(0) + 3);
    view.setCurrentIndex(rows.mapFromNode(current));
    rows.setExpanded(above, false);
    EXPECT_EQ(view.currentNode(), current);
    EXPECT_EQ(view.currentIndex().row() - view.rowAt(0), 3);
    rows.setExpanded(std::span<const NodeId>(&above, 1), true);
    EXPECT_EQ(view.currentNode(), current);
    EXPECT_EQ(view.currentIndex().row() - view.rowAt(0), 3);
    // Collapsed away, the top node gives its place to its closest shown ancestor.
    const NodeId parent = t.node(top).parent;
    ASSERT_TRUE(parent.valid());
    view.setCurrentIndex({});
    view.verticalScrollBar()->setValue(rows.mapFromNode(top).row());
    rows.setExpanded(parent, false);
    EXPECT_EQ(rows.nodeAtRow(view.rowAt(0)), parent) << "collapsing its parent scrolled to the parent";
}

TEST_P(ModelsOnFixture, RecolourRepaintsNestedRowsInAView)
{
    const auto& a = analysis();
    CompareTreeModel model;
    configure(model);
    TreeRowsModel proxy;
    proxy.setSourceModel(&model);
    CompareTreeView view;
    view.setModel(&proxy);
    view.resize(900, 4000); // tall enough to show the gelu row without scrolling
    ui::repaintOnAppearanceChange(&model, &view);
    model.setSkeleton(a.skeleton);
    model.setStatus(a.status);
    view.expandAll();
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    const QModelIndex gelu = proxy.mapFromNode(nodeOf(a, kGelu), CompareTreeModel::StatusColumn);
    const QRect rect = view.visualRect(gelu);
    ASSERT_TRUE(view.viewport()->rect().contains(rect)) << "the gelu row is on screen";
    ASSERT_TRUE(model.indexOf(nodeOf(a, kGelu)).parent().isValid()) << "a nested row";
    PaintSpy spy;
    view.viewport()->installEventFilter(&spy);
    QCoreApplication::processEvents();
    spy.painted = {};
    model.setDarkPalette(true);
    QTest::qWait(50);
    EXPECT_TRUE(spy.painted.contains(rect)) << "the nested row was repainted";
    const QImage image = view.viewport()->grab().toImage();
    EXPECT_EQ(QColor(image.pixel(rect.right() - 3, rect.center().y())),
              ui::statuspalette::fill(model.band(nodeOf(a, kGelu)), true));
    spy.painted = {};
    model.setBands({ session::ColorBands::Scheme::ContinuousIndex, 0.0, 0.0 });
    QTest::qWait(50);
    EXPECT_TRUE(spy.painted.contains(rect));
    // New verdicts (bulk or row by row) repaint it too.
    spy.painted = {};
    model.setStatus(nullptr);
    QTest::qWait(50);
    EXPECT_TRUE(spy.painted.contains(rect));
    EXPECT_EQ(model.data(model.indexOf(nodeOf(a, kGelu)), CompareTreeModel::OwnStatusRole).toInt(), int(Status::Pending));
    view.viewport()->removeEventFilter(&spy);
}

TEST_P(ModelsOnFixture, NodeSearchFindsByNameInDisplayOrder)
{
    const auto& a = analysis();
    NodeSearch search(a.skeleton->tree);
    CompareTreeModel model;
    model.setSkeleton(a.skeleton);
    ASSERT_EQ(search.displayOrder().size(), model.displayOrder().size());
    EXPECT_TRUE(std::equal(search.displayOrder().begin(), search.displayOrder().end(), model.displayOrder().begin()));

    const auto hits = search.find("GELU");
    ASSERT_TRUE(hits.valid());
    ASSERT_GE(hits.nodes.size(), 2u); // forward and backward
    EXPECT_NE(std::find(hits.nodes.begin(), hits.nodes.end(), nodeOf(a, kGelu)), hits.nodes.end());
    for (std::size_t k = 1; k < hits.nodes.size(); ++k)
        EXPECT_LT(model.displayPosition(hits.nodes[k - 1]), model.displayPosition(hits.nodes[k]));
    // Oracle: a plain scan.
    std::size_t expected = 0;
    for (std::uint32_t n = 0; n < a.skeleton->tree->size(); ++n) {
        const QString key = QString::fromUtf8(a.skeleton->tree->node(NodeId { n }).key.data(),
                                              qsizetype(a.skeleton->tree->node(NodeId { n }).key.size()));
        expected += key.contains("gelu", Qt::CaseInsensitive) ? 1 : 0;
    }
    EXPECT_EQ(hits.nodes.size(), expected);

    EXPECT_TRUE(search.find("GELU", { false, true }).nodes.empty()) << "case-sensitive";
    const auto exact = search.find(R"(^Functional\.gelu\.\d+\.forward$)", { true, false });
    ASSERT_TRUE(exact.valid());
    ASSERT_EQ(exact.nodes.size(), 1u);
    EXPECT_EQ(exact.nodes[0], nodeOf(a, kGelu));
    EXPECT_EQ(search.find("^functional\\.GELU", { true, false }).nodes.size(), 2u) << "regex, case-insensitive";
    EXPECT_TRUE(search.find("^functional\\.GELU", { true, true }).nodes.empty());

    const auto bad = search.find("gelu.(0", { true, false });
    EXPECT_FALSE(bad.valid());
    EXPECT_TRUE(bad.nodes.empty());
    EXPECT_FALSE(bad.error.isEmpty());
    EXPECT_TRUE(search.find("", {}).nodes.empty());
    EXPECT_TRUE(search.find("no such node at all").nodes.empty());
    // Non-ASCII patterns take the QString path and still work.
    EXPECT_TRUE(search.find(QString::fromUtf8("g\u00e9lu")).nodes.empty());

    // Regular expressions narrowed by a required literal find exactly what matching every key finds.
    for (const char* pattern :
         { R"(^Functional\.gelu\.\d+\.forward$)", "gelu|linear", "(?i)GELU", R"(Functional\.(gelu|linear)\.0)",
           "lin?ear", "li[n]ear", "forward$", "ge+lu", "gel*u", "g.lu", R"(\x46unctional\.gelu)", R"(\Qgelu\E)",
           R"(Module\..*forward)", "Ne{0}t", "Lin{1,2}ear", R"(\.0\.)", "FORWARD", R"(r[]a]p)", "[[:alpha:]]elu" }) {
        for (const bool caseSensitive : { false, true }) {
            QRegularExpression oracle(pattern, caseSensitive ? QRegularExpression::NoPatternOption
                                                             : QRegularExpression::CaseInsensitiveOption);
            ASSERT_TRUE(oracle.isValid()) << pattern;
            std::vector<NodeId> matching;
            for (const NodeId id : search.displayOrder()) {
                const std::string_view key = a.skeleton->tree->node(id).key;
                if (oracle.match(QString::fromUtf8(key.data(), qsizetype(key.size()))).hasMatch())
                    matching.push_back(id);
            }
            EXPECT_EQ(search.find(pattern, { true, caseSensitive }).nodes, matching)
                << pattern << (caseSensitive ? " (case-sensitive)" : "");
        }
    }
}

TEST(NodeSearch, RequiredLiteralOfARegularExpression)
{
    using ui::requiredLiteral;
    EXPECT_EQ(requiredLiteral(R"(^Functional\.gelu\.\d+\.forward$)"), "functional.gelu.");
    EXPECT_EQ(requiredLiteral("Gelu"), "gelu");
    EXPECT_EQ(requiredLiteral("abc*de"), "ab");
    EXPECT_EQ(requiredLiteral("ab+cd"), "ab");
    EXPECT_EQ(requiredLiteral("x(gelu|relu)forward"), "forward");
    EXPECT_EQ(requiredLiteral("gel[uo]s{2}"), "gel");
    EXPECT_EQ(requiredLiteral(R"(a\*b)"), "a*b");
    EXPECT_EQ(requiredLiteral("gelu|relu"), "") << "alternation at the top level";
    EXPECT_EQ(requiredLiteral("(?i)gelu"), "");
    EXPECT_EQ(requiredLiteral(R"(\x41BC)"), "");
    EXPECT_EQ(requiredLiteral(R"(\Qa.b\E)"), "");
    EXPECT_EQ(requiredLiteral("[abc"), "") << "unterminated";
    EXPECT_EQ(requiredLiteral(QString::fromUtf8("g\u00e9lu")), "");
}

TEST_P(ModelsOnFixture, RankOverviewMarksTheJobOrigin)
{
    ModelTestFailures failures;
    const Fixture& f = fixture(name());
    RankOverviewModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setPlan(f.plan);
    ASSERT_EQ(model.rowCount(), int(f.plan.pairs.size()));
    ASSERT_EQ(f.plan.pairs.size(), 2u); // step0 and step1, one rank each
    EXPECT_EQ(model.data(model.index(0, RankOverviewModel::StateColumn)).toString(), QString("pending"));
    EXPECT_EQ(model.originRow(), -1);

    // Analyse step1 first: it is the only one done, so it leads for now.
    session::AnalysisOptions options;
    options.threads = 2;
    const std::size_t step1 = f.plan.pairsOfStep(1).at(0);
    const std::size_t step0 = f.plan.pairsOfStep(0).at(0);
    model.setRunning(step1);
    EXPECT_EQ(model.data(model.index(int(step1), RankOverviewModel::StateColumn)).toString(), QString("running"));
    auto a1 = session::analysePair(f.plan.pairs[step1], options);
    ASSERT_TRUE(a1.ok());
    model.setSummary(session::summarize(**a1, step1));
    EXPECT_EQ(model.originRow(), int(step1));

    // step0 holds the real culprit (inputs pass, output fails); step1's inputs already differ.
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    model.setSummary(session::summarize(*f.step0, step0));
    ASSERT_EQ(model.originRow(), int(step0))
        << "step0: " << f.step0->firstFailure.summary << " / step1: " << (*a1)->firstFailure.summary;
    EXPECT_GE(changes.count(), 2) << "both the new and the old leader repaint";
    const QModelIndex first = model.index(int(step0), RankOverviewModel::FirstFailureColumn);
    EXPECT_TRUE(model.data(first).toString().contains(kGelu));
    EXPECT_TRUE(model.data(first).toString().contains("job origin"));
    EXPECT_TRUE(model.data(first, Qt::FontRole).value<QFont>().bold());
    EXPECT_TRUE(model.data(first, RankOverviewModel::OriginRole).toBool());
    EXPECT_EQ(model.data(first, RankOverviewModel::FirstFailureKeyRole).toString(), QString(kGelu));
    const QModelIndex other = model.index(int(step1), RankOverviewModel::FirstFailureColumn);
    EXPECT_FALSE(model.data(other).toString().contains("job origin"));
    EXPECT_FALSE(model.data(other, Qt::FontRole).isValid());
    EXPECT_EQ(model.data(model.index(int(step0), RankOverviewModel::ExecutionIndexColumn)).toUInt(),
              f.step0->firstFailure.executionIndex);
    EXPECT_EQ(model.data(model.index(int(step0), RankOverviewModel::ErrorsColumn)).toUInt(),
              f.step0->status->counts[size_t(Status::Error)]);
    EXPECT_EQ(model.data(model.index(int(step0), RankOverviewModel::UnmatchedColumn)).toUInt(),
              f.step0->status->counts[size_t(Status::Unmatched)]);
    EXPECT_EQ(model.data(model.index(int(step0), RankOverviewModel::StepColumn)).toLongLong(), 0);
    EXPECT_EQ(model.data(model.index(int(step0), RankOverviewModel::RanksColumn)).toString(),
              QString("rank \u2194 rank"));
    EXPECT_EQ(model.data(model.index(int(step0), RankOverviewModel::StateColumn)).toString(), QString("done"));

    model.setFailed(step1, "broken");
    EXPECT_EQ(model.data(model.index(int(step1), RankOverviewModel::StateColumn)).toString(), QString("failed"));
    EXPECT_EQ(model.originRow(), int(step0));
    model.setFailed(step0, "broken too");
    EXPECT_EQ(model.originRow(), -1);
    model.setPlan(f.plan);
    EXPECT_EQ(model.rowCount(), 2);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelsOnFixture,
                         ::testing::Combine(::testing::ValuesIn(kFixtures), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<const char*, bool>>& param) {
                             const std::string fixtureName = std::get<0>(param.param);
                             // tensor, statistics, md5
                             return fixtureName.substr(7, fixtureName.size() - 7 - 4)
                                 + (std::get<1>(param.param) ? "_bulk" : "");
                         });

TEST(RankOverviewModel, RanksOfAStepCompareByPositionAndEarlierStepsWin)
{
    ModelTestFailures failures;
    session::SessionPlan plan;
    auto pairOf = [](std::int64_t step, std::int64_t rank) {
        session::RankPair p;
        p.step = step;
        p.npu.rank = rank;
        p.bench.rank = rank;
        return p;
    };
    plan.pairs = { pairOf(0, 0), pairOf(0, 1), pairOf(0, 2), pairOf(1, 0) };
    auto summary = [](std::size_t index, bool found, std::uint32_t position) {
        session::PairSummary s;
        s.pairIndex = index;
        s.firstFailure.found = found;
        s.firstFailure.key = "Functional.op." + std::to_string(index) + ".forward";
        s.firstFailure.executionIndex = position;
        s.firstFailure.inputsAlreadyDiffer = !found;
        // What session::summarize places for findJobOrigin (no communication in these dumps).
        s.failure.step = index == 3 ? 1 : 0;
        s.failure.rank = index == 3 ? 0 : std::int64_t(index);
        s.failure.rankLabel = "rank" + std::to_string(s.failure.rank);
        probescope::job::locateFailure(s.failure, s.firstFailure, nullptr);
        return s;
    };
    RankOverviewModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setPlan(plan);
    EXPECT_EQ(model.data(model.index(1, RankOverviewModel::RanksColumn)).toString(), QString("rank1 ↔ rank1"));
    model.setSummary(summary(3, true, 1)); // step 1, very early
    EXPECT_EQ(model.originRow(), 3);
    model.setSummary(summary(0, true, 50));
    EXPECT_EQ(model.originRow(), 0) << "step 0 ran before step 1";
    model.setSummary(summary(1, true, 20));
    EXPECT_EQ(model.originRow(), 1) << "earlier culprit among the ranks of step 0";
    model.setSummary(summary(2, false, 5));
    EXPECT_EQ(model.originRow(), 1) << "a real culprit beats inputs that already differ";
    EXPECT_TRUE(model.data(model.index(2, RankOverviewModel::FirstFailureColumn)).toString().contains("already differ"));
    session::PairSummary clean;
    clean.pairIndex = 1;
    model.setSummary(clean);
    EXPECT_EQ(model.data(model.index(1, RankOverviewModel::FirstFailureColumn)).toString(), QString("none"));
    EXPECT_EQ(model.originRow(), 0);
    EXPECT_TRUE(model.data(model.index(0, RankOverviewModel::StepColumn), Qt::FontRole).value<QFont>().bold());
}

TEST(StatusPalette, FillsAreMsprobesAndIconsDiffer)
{
    EXPECT_EQ(ui::statuspalette::fill(Status::Pass, false), QColor("#FFFCF3"));
    EXPECT_EQ(ui::statuspalette::fill(Status::Warning, false), QColor("#FFDC7F"));
    EXPECT_EQ(ui::statuspalette::fill(Status::Error, false), QColor("#FF704D"));
    EXPECT_EQ(ui::statuspalette::fill(Status::Unmatched, false), QColor("#C7C7C7"));
    ui::StatusIcons icons;
    // Shape, not only colour: every status draws a different image, and the "from below" badge shows.
    std::vector<QImage> images;
    for (int s = 0; s < 6; ++s) {
        images.push_back(icons.icon(Status(s), false, false).pixmap(16).toImage());
        EXPECT_NE(images.back(), icons.icon(Status(s), true, false).pixmap(16).toImage());
    }
    for (std::size_t i = 0; i < images.size(); ++i) {
        for (std::size_t j = i + 1; j < images.size(); ++j)
            EXPECT_NE(images[i], images[j]) << i << " vs " << j;
    }
    // Cached: the same icon object comes back.
    EXPECT_EQ(icons.icon(Status::Error, false, false).cacheKey(), icons.icon(Status::Error, false, false).cacheKey());
}

TEST(CompareTreeModel, EmptyModelIsHarmless)
{
    ModelTestFailures failures;
    CompareTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    EXPECT_EQ(model.rowCount(), 0);
    EXPECT_FALSE(model.index(0, 0).isValid());
    EXPECT_FALSE(model.nextFailing(NodeId {}).valid());
    model.setStatus(nullptr);
    model.applyUpdate({ { 0 }, { Status::Error } });
    model.setBands({ session::ColorBands::Scheme::ContinuousIndex, 0.1, 0.2 });
    model.setDarkPalette(true);
    EXPECT_TRUE(model.failingNodesInDisplayOrder().empty());
}

TEST(CompareTreeModel, MismatchedStatusTableIsIgnored)
{
    const auto& a = *fixture("modelA_md5_mix").step0;
    CompareTreeModel model;
    model.setSkeleton(a.skeleton);
    auto wrong = std::make_shared<session::NodeStatusTable>(*a.status);
    wrong->own.pop_back();
    model.setStatus(wrong);
    EXPECT_EQ(model.statusTable(), nullptr);
    EXPECT_EQ(model.counts()[size_t(Status::Pending)], a.skeleton->tree->size());
    // Out-of-range nodes and statuses in an update are skipped.
    model.applyUpdate({ { std::uint32_t(a.skeleton->tree->size()), 0 }, { Status::Error, Status(17) } });
    EXPECT_EQ(model.counts()[size_t(Status::Pending)], a.skeleton->tree->size());
}

} // namespace
