// SPDX-License-Identifier: Apache-2.0
// The models of ui/models on tiny trees written in the test (as hotspot's tst_models): every model and
// proxy under QAbstractItemModelTester, compared as indented text, with statuses set, streamed,
// filtered and searched. The fixture-based tests (tst_models.cpp) cover real dumps; these cover the
// shapes a fixture happens not to have, and say exactly what each tree should look like.
#include "core/inlinerank.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/nodesearch.h"
#include "ui/models/treerowsmodel.h"
#include "ui/models/treebranchdelegate.h"
#include "ui/models/statuspalette.h"
#include "ui/views/comparetreeview.h"
#include "ui/modeltestfailures.h"
#include "core/session/nodestatus.h"
#include "core/session/session.h"
#include "core/tree/constructtree.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace probescope;
using probescope::testing::ModelTestFailures;
using probescope::ui::CompareTreeModel;
using probescope::ui::NodeSearch;
using probescope::ui::TreeRowsModel;
using probescope::ui::CompareTreeView;
using session::Status;
using tree::NodeId;

const std::map<std::string, Status> kStatusWords = {
    { "nodata", Status::NoData }, { "pending", Status::Pending },     { "pass", Status::Pass },
    { "unmatched", Status::Unmatched }, { "warning", Status::Warning }, { "error", Status::Error },
};

std::string word(Status s)
{
    for (const auto& [w, status] : kStatusWords) {
        if (status == s)
            return w;
    }
    return "?";
}

/// A tree written as indented text, two spaces a level, each line `key status`; the keys are written
/// to dump.json in the order of the lines.
struct InlineTree
{
    std::shared_ptr<const session::PairSkeleton> skeleton;
    std::vector<Status> own; ///< by NodeId

    const tree::ConstructTree& tree() const { return *skeleton->tree; }
    NodeId node(const std::string& key) const
    {
        const auto id = tree().find(key);
        EXPECT_TRUE(id.has_value()) << key;
        return id ? *id : NodeId {};
    }
};

InlineTree buildTree(const std::string& text)
{
    std::vector<std::string> keys;
    std::vector<Status> statuses;
    std::vector<std::pair<std::string, std::string>> links;
    std::vector<std::string> stack; // the open ancestors of the current line
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(' ') == std::string::npos)
            continue;
        const std::size_t indent = line.find_first_not_of(' ');
        std::istringstream fields(line.substr(indent));
        std::string key;
        std::string status;
        fields >> key >> status;
        const std::size_t depth = indent / 2;
        EXPECT_LE(depth, stack.size()) << "a line indented by more than one level: " << line;
        stack.resize(std::min(depth, stack.size()));
        links.emplace_back(key, stack.empty() ? std::string() : stack.back());
        stack.push_back(key);
        keys.push_back(key);
        EXPECT_TRUE(kStatusWords.count(status)) << "unknown status in: " << line;
        statuses.push_back(kStatusWords.count(status) ? kStatusWords.at(status) : Status::NoData);
    }
    const auto rank = probescope::testing::inlineRank(links);
    auto skeleton = std::make_shared<session::PairSkeleton>();
    skeleton->npu = rank;
    skeleton->bench = rank;
    skeleton->tree = tree::ConstructTree::build(rank);
    EXPECT_TRUE(skeleton->tree->diagnostics().empty());

    InlineTree out;
    out.own.assign(skeleton->tree->size(), Status::NoData);
    for (std::size_t i = 0; i < keys.size(); ++i)
        out.own[skeleton->tree->find(keys[i])->value] = statuses[i];
    out.skeleton = skeleton;
    return out;
}

/// A status table of `own`, folded by core (session::aggregate) as the analysis folds it.
std::shared_ptr<const session::NodeStatusTable> statusTable(const InlineTree& t, const std::vector<Status>& own)
{
    auto table = std::make_shared<session::NodeStatusTable>();
    table->own = own;
    table->metrics.assign(own.size(), {});
    table->rowOffsets.assign(own.size() + 1, 0);
    session::aggregate(*table, t.tree());
    return table;
}

/// The rows a model shows, depth-first, as `key own subtree failing-below`, indented by depth (the
/// tree's, or a flat TreeRowsModel's DepthRole).
std::string printModel(const QAbstractItemModel& model, const QModelIndex& parent = {}, int depth = 0)
{
    std::string out;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, CompareTreeModel::NameColumn, parent);
        const QVariant flatDepth = index.data(TreeRowsModel::DepthRole);
        out += std::string(std::size_t(flatDepth.isValid() ? flatDepth.toInt() : depth) * 2, ' ') + index.data(CompareTreeModel::KeyRole).toString().toStdString()
            + ' ' + word(Status(index.data(CompareTreeModel::OwnStatusRole).toInt())) + ' '
            + word(Status(index.data(CompareTreeModel::SubtreeStatusRole).toInt())) + ' '
            + std::to_string(index.data(CompareTreeModel::FailingBelowRole).toUInt()) + '\n';
        out += printModel(model, index, depth + 1);
    }
    return out;
}

std::vector<std::string> keysOf(const InlineTree& t, const std::vector<NodeId>& nodes)
{
    std::vector<std::string> out;
    for (const NodeId n : nodes)
        out.emplace_back(t.tree().node(n).key);
    return out;
}

// A net with two blocks; the second block's gelu fails, a reshape has no bench counterpart, and the
// backward of the first linear warns.
const char* const kNet = R"(
Module.net.Net.forward.0 pass
  Module.net.b0.Block.forward.0 pass
    Functional.linear.0.forward pass
    Functional.relu.0.forward pass
  Module.net.b1.Block.forward.0 pass
    Functional.linear.1.forward pass
    Functional.gelu.0.forward error
    Tensor.reshape.0.forward unmatched
Functional.linear.0.backward warning
)";

TEST(InlineCompareTreeModel, ShowsTheTreePendingUntilAStatusTableArrives)
{
    ModelTestFailures failures;
    const InlineTree t = buildTree(kNet);
    CompareTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setSkeleton(t.skeleton, compare::CompareMode::Summary);
    EXPECT_EQ(model.rowCount(), 2);
    EXPECT_EQ(printModel(model), "Module.net.Net.forward.0 pending pending 0\n"
                                 "  Module.net.b0.Block.forward.0 pending pending 0\n"
                                 "    Functional.linear.0.forward pending pending 0\n"
                                 "    Functional.relu.0.forward pending pending 0\n"
                                 "  Module.net.b1.Block.forward.0 pending pending 0\n"
                                 "    Functional.linear.1.forward pending pending 0\n"
                                 "    Functional.gelu.0.forward pending pending 0\n"
                                 "    Tensor.reshape.0.forward pending pending 0\n"
                                 "Functional.linear.0.backward pending pending 0\n");
    EXPECT_EQ(model.counts()[std::size_t(Status::Pending)], 9u);
    EXPECT_FALSE(model.hasChildren(model.indexOf(t.node("Functional.relu.0.forward"))));
    EXPECT_EQ(model.rowCount(model.indexOf(t.node("Module.net.b1.Block.forward.0"))), 3);
}

TEST(InlineCompareTreeModel, MapsTheStatusesCoreFolded)
{
    ModelTestFailures failures;
    const InlineTree t = buildTree(kNet);
    CompareTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setSkeleton(t.skeleton, compare::CompareMode::Summary);
    model.setStatus(statusTable(t, t.own));
    // A module is painted by its own status; the worst below and the failing count come from core.
    EXPECT_EQ(printModel(model), "Module.net.Net.forward.0 pass error 1\n"
                                 "  Module.net.b0.Block.forward.0 pass pass 0\n"
                                 "    Functional.linear.0.forward pass pass 0\n"
                                 "    Functional.relu.0.forward pass pass 0\n"
                                 "  Module.net.b1.Block.forward.0 pass error 1\n"
                                 "    Functional.linear.1.forward pass pass 0\n"
                                 "    Functional.gelu.0.forward error error 0\n"
                                 "    Tensor.reshape.0.forward unmatched unmatched 0\n"
                                 "Functional.linear.0.backward warning warning 0\n");
    EXPECT_EQ(model.counts()[std::size_t(Status::Pass)], 6u);
    EXPECT_EQ(model.counts()[std::size_t(Status::Error)], 1u);
    EXPECT_EQ(model.counts()[std::size_t(Status::Warning)], 1u);
    EXPECT_EQ(model.counts()[std::size_t(Status::Unmatched)], 1u);
    EXPECT_EQ(keysOf(t, model.failingNodesInDisplayOrder()),
              (std::vector<std::string> { "Functional.gelu.0.forward", "Functional.linear.0.backward" }));
    // F / N / Shift+N: the next failing node in display order, wrapping at the ends.
    const NodeId gelu = t.node("Functional.gelu.0.forward");
    const NodeId backward = t.node("Functional.linear.0.backward");
    EXPECT_EQ(model.nextFailing(NodeId {}), gelu);
    EXPECT_EQ(model.nextFailing(gelu), backward);
    EXPECT_EQ(model.nextFailing(backward), gelu);
    EXPECT_FALSE(model.nextFailing(backward, false).valid());
    EXPECT_EQ(model.previousFailing(gelu), backward);
    // Back to pending.
    model.setStatus(nullptr);
    EXPECT_EQ(model.counts()[std::size_t(Status::Pending)], 9u);
    EXPECT_EQ(model.ownStatus(gelu), Status::Pending);
}

TEST(InlineCompareTreeModel, StreamedUpdatesEndWhereAFullTableWouldBe)
{
    ModelTestFailures failures;
    const InlineTree t = buildTree(kNet);
    const std::size_t n = t.own.size();
    std::mt19937 random(13);
    for (int round = 0; round < 20; ++round) {
        CompareTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
        model.setSkeleton(t.skeleton, compare::CompareMode::Summary);
        int ownChanged = 0;
        QObject::connect(&model, &CompareTreeModel::ownStatusesChanged, [&] { ++ownChanged; });
        std::vector<Status> own(n, Status::Pending);
        model.setStatus(statusTable(t, own));
        // Random batches of random statuses, a node possibly twice in one batch (the last one wins).
        for (int batch = 0; batch < 12; ++batch) {
            session::StatusUpdate update;
            const int size = 1 + int(random() % 4);
            for (int k = 0; k < size; ++k) {
                const auto node = std::uint32_t(random() % n);
                const auto status = Status(random() % 6);
                update.nodes.push_back(node);
                update.own.push_back(status);
                own[node] = status;
            }
            model.applyUpdate(update);
            const auto expected = statusTable(t, own);
            for (std::uint32_t i = 0; i < n; ++i) {
                ASSERT_EQ(model.ownStatus(NodeId { i }), expected->own[i]) << "round " << round << " node " << i;
                ASSERT_EQ(model.subtreeStatus(NodeId { i }), expected->subtree[i]) << "node " << i;
                ASSERT_EQ(model.failingBelow(NodeId { i }), expected->failingBelow[i]) << "node " << i;
            }
            ASSERT_EQ(model.counts(), expected->counts);
        }
        EXPECT_GT(ownChanged, 0);
    }
}

TEST(InlineCompareTreeModel, AnUpdateSignalsTheNodeAndTheAncestorsItChanges)
{
    const InlineTree t = buildTree(kNet);
    CompareTreeModel model;
    model.setSkeleton(t.skeleton, compare::CompareMode::Summary);
    model.setStatus(statusTable(t, t.own));
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    std::vector<std::vector<std::uint32_t>> ownChanged;
    QObject::connect(&model, &CompareTreeModel::ownStatusesChanged,
                     [&](const std::vector<std::uint32_t>& nodes) { ownChanged.push_back(nodes); });
    const NodeId relu = t.node("Functional.relu.0.forward");
    session::StatusUpdate update;
    update.nodes = { relu.value };
    update.own = { Status::Warning };
    model.applyUpdate(update);
    ASSERT_EQ(ownChanged.size(), 1u);
    EXPECT_EQ(ownChanged.front(), std::vector<std::uint32_t> { relu.value });
    std::vector<std::string> rows;
    for (const auto& args : changed) {
        const QModelIndex first = args.at(0).toModelIndex();
        const QModelIndex last = args.at(1).toModelIndex();
        EXPECT_EQ(first.parent(), last.parent());
        for (int r = first.row(); r <= last.row(); ++r)
            rows.push_back(first.siblingAtRow(r).data(CompareTreeModel::KeyRole).toString().toStdString());
    }
    std::sort(rows.begin(), rows.end());
    // relu itself, its block (worst below) and the net (worst below unchanged, failing below 1 -> 2).
    EXPECT_EQ(rows, (std::vector<std::string> { "Functional.relu.0.forward", "Module.net.Net.forward.0",
                                                "Module.net.b0.Block.forward.0" }));
    // An update that changes nothing says nothing.
    changed.clear();
    model.applyUpdate(update);
    EXPECT_TRUE(changed.isEmpty());
}

// kNet filtered to its errors: gelu, and its ancestors to show it in its place.
const std::string kOnlyGelu = "Module.net.Net.forward.0 pass error 1\n"
                              "  Module.net.b1.Block.forward.0 pass error 1\n"
                              "    Functional.gelu.0.forward error error 0\n";

/// kNet with its statuses in a model, its rows fully expanded under the model tester.
struct FilteredNet
{
    FilteredNet()
    {
        model.setSkeleton(t.skeleton, compare::CompareMode::Summary);
        model.setStatus(statusTable(t, t.own));
        proxy.setSourceModel(&model);
        proxy.expandAll(); // every shown node has a row, as in a proxy
    }

    ModelTestFailures failures;
    const InlineTree t = buildTree(kNet);
    CompareTreeModel model;
    TreeRowsModel proxy;
    QAbstractItemModelTester tester { &proxy, QAbstractItemModelTester::FailureReportingMode::Warning };
};

TEST(InlineTreeRows, StatusFilterKeepsTheAncestorsAndFollowsStreamedChanges)
{
    FilteredNet f;
    const InlineTree& t = f.t;
    CompareTreeModel& model = f.model;
    TreeRowsModel& proxy = f.proxy;
    EXPECT_FALSE(proxy.isFiltering());
    EXPECT_EQ(printModel(proxy), printModel(model));

    proxy.setStatusMask(TreeRowsModel::statusBit(Status::Error));
    EXPECT_TRUE(proxy.isFiltering());
    EXPECT_EQ(printModel(proxy), kOnlyGelu);
    EXPECT_FALSE(proxy.acceptsNode(t.node("Module.net.Net.forward.0"))) << "shown only as an ancestor";

    // relu starts failing while the filter is on: it appears in its place.
    session::StatusUpdate update;
    update.nodes = { t.node("Functional.relu.0.forward").value };
    update.own = { Status::Error };
    model.applyUpdate(update);
    EXPECT_EQ(printModel(proxy), "Module.net.Net.forward.0 pass error 2\n"
                                 "  Module.net.b0.Block.forward.0 pass error 1\n"
                                 "    Functional.relu.0.forward error error 0\n"
                                 "  Module.net.b1.Block.forward.0 pass error 1\n"
                                 "    Functional.gelu.0.forward error error 0\n");
    // ... and goes again when it passes.
    update.own = { Status::Pass };
    model.applyUpdate(update);
    EXPECT_EQ(printModel(proxy), kOnlyGelu);

    proxy.setStatusVisible(Status::Unmatched, true);
    proxy.setStatusVisible(Status::Warning, true);
    EXPECT_EQ(printModel(proxy), "Module.net.Net.forward.0 pass error 1\n"
                                 "  Module.net.b1.Block.forward.0 pass error 1\n"
                                 "    Functional.gelu.0.forward error error 0\n"
                                 "    Tensor.reshape.0.forward unmatched unmatched 0\n"
                                 "Functional.linear.0.backward warning warning 0\n");
    proxy.clearFilters();
    EXPECT_EQ(printModel(proxy), printModel(model));
}

TEST(InlineTreeRows, NameKindAndDirectionFilters)
{
    FilteredNet f;
    TreeRowsModel& proxy = f.proxy;

    proxy.setNameFilter(QStringLiteral("LINEAR"));
    EXPECT_EQ(printModel(proxy), "Module.net.Net.forward.0 pass error 1\n"
                                 "  Module.net.b0.Block.forward.0 pass pass 0\n"
                                 "    Functional.linear.0.forward pass pass 0\n"
                                 "  Module.net.b1.Block.forward.0 pass error 1\n"
                                 "    Functional.linear.1.forward pass pass 0\n"
                                 "Functional.linear.0.backward warning warning 0\n");
    proxy.setDirectionFilter(TreeRowsModel::DirectionFilter::Backward);
    EXPECT_EQ(printModel(proxy), "Functional.linear.0.backward warning warning 0\n");

    proxy.clearFilters();
    proxy.setNameFilter(QStringLiteral("b[01]\\.Block"), true);
    EXPECT_EQ(printModel(proxy), "Module.net.Net.forward.0 pass error 1\n"
                                 "  Module.net.b0.Block.forward.0 pass pass 0\n"
                                 "  Module.net.b1.Block.forward.0 pass error 1\n");
    proxy.setNameFilter(QStringLiteral("(unclosed"), true);
    EXPECT_FALSE(proxy.nameFilterError().isEmpty());
    EXPECT_EQ(proxy.rowCount(), 0) << "an invalid expression matches nothing";

    proxy.clearFilters();
    proxy.setKindFilter(TreeRowsModel::KindFilter::Module);
    EXPECT_EQ(printModel(proxy), "Module.net.Net.forward.0 pass error 1\n"
                                 "  Module.net.b0.Block.forward.0 pass pass 0\n"
                                 "  Module.net.b1.Block.forward.0 pass error 1\n");
    proxy.setKindFilter(TreeRowsModel::KindFilter::Api);
    proxy.setStatusMask(TreeRowsModel::statusBit(Status::Unmatched));
    const std::string onlyReshape = "Module.net.Net.forward.0 pass error 1\n"
                                    "  Module.net.b1.Block.forward.0 pass error 1\n"
                                    "    Tensor.reshape.0.forward unmatched unmatched 0\n";
    EXPECT_EQ(printModel(proxy), onlyReshape);
    // All three at once, as the filter bar sets them: one layout change.
    proxy.clearFilters();
    QSignalSpy layouts(&proxy, &QAbstractItemModel::layoutChanged);
    proxy.setFilters(TreeRowsModel::statusBit(Status::Unmatched), TreeRowsModel::DirectionFilter::Forward,
                     TreeRowsModel::KindFilter::Api);
    EXPECT_EQ(layouts.count(), 1);
    EXPECT_EQ(printModel(proxy), onlyReshape);
    proxy.setFilters(TreeRowsModel::statusBit(Status::Unmatched), TreeRowsModel::DirectionFilter::Forward,
                     TreeRowsModel::KindFilter::Api);
    EXPECT_EQ(layouts.count(), 1) << "nothing changed";
}

/// kNet in a CompareTreeView on screen, collapsed as a new tree is.
struct NetInAView
{
    NetInAView()
    {
        model.setSkeleton(t.skeleton, compare::CompareMode::Summary);
        model.setStatus(statusTable(t, t.own));
        rows.setSourceModel(&model);
        view.setModel(&rows);
        view.setColumnWidth(CompareTreeModel::NameColumn, 360);
        view.resize(700, 300);
        view.show();
        EXPECT_TRUE(QTest::qWaitForWindowExposed(&view));
        view.setFocus();
    }
    std::string shown() const { return printModel(rows); }
    std::string current() const
    {
        const NodeId n = view.currentNode();
        return n.valid() ? std::string(t.tree().node(n).key) : std::string("(none)");
    }
    QPoint arrowOf(const std::string& key)
    {
        const QModelIndex index = rows.mapFromNode(t.node(key));
        QStyleOptionViewItem option;
        option.initFrom(&view);
        option.rect = view.visualRect(index);
        return ui::TreeBranchDelegate::arrowRect(option, index).center();
    }
    QPoint textOf(const std::string& key)
    {
        const QRect r = view.visualRect(rows.mapFromNode(t.node(key)));
        return { r.right() - 20, r.center().y() };
    }

    ModelTestFailures failures;
    const InlineTree t = buildTree(kNet);
    CompareTreeModel model;
    TreeRowsModel rows;
    QAbstractItemModelTester tester { &rows, QAbstractItemModelTester::FailureReportingMode::Warning };
    CompareTreeView view;
};

const std::string kNetCollapsed = "Module.net.Net.forward.0 pass error 1\n"
                                  "Functional.linear.0.backward warning warning 0\n";
const std::string kNetTopOpen = "Module.net.Net.forward.0 pass error 1\n"
                                "  Module.net.b0.Block.forward.0 pass pass 0\n"
                                "  Module.net.b1.Block.forward.0 pass error 1\n"
                                "Functional.linear.0.backward warning warning 0\n";

TEST(InlineTreeView, ExpandsAndCollapsesByKeys)
{
    NetInAView f;
    EXPECT_EQ(f.shown(), kNetCollapsed);
    f.view.setCurrentIndex(f.rows.index(0, 0));
    QTest::keyClick(&f.view, Qt::Key_Right);
    EXPECT_EQ(f.shown(), kNetTopOpen) << "Right opens a closed node";
    EXPECT_EQ(f.current(), "Module.net.Net.forward.0");
    QTest::keyClick(&f.view, Qt::Key_Right);
    EXPECT_EQ(f.current(), "Module.net.b0.Block.forward.0") << "Right on an open node steps to its first child";
    QTest::keyClick(&f.view, Qt::Key_Down);
    EXPECT_EQ(f.current(), "Module.net.b1.Block.forward.0");
    QTest::keyClick(&f.view, Qt::Key_Plus);
    EXPECT_EQ(f.shown(), "Module.net.Net.forward.0 pass error 1\n"
                         "  Module.net.b0.Block.forward.0 pass pass 0\n"
                         "  Module.net.b1.Block.forward.0 pass error 1\n"
                         "    Functional.linear.1.forward pass pass 0\n"
                         "    Functional.gelu.0.forward error error 0\n"
                         "    Tensor.reshape.0.forward unmatched unmatched 0\n"
                         "Functional.linear.0.backward warning warning 0\n");
    QTest::keyClick(&f.view, Qt::Key_Down);
    QTest::keyClick(&f.view, Qt::Key_Down);
    EXPECT_EQ(f.current(), "Functional.gelu.0.forward");
    QTest::keyClick(&f.view, Qt::Key_Left);
    EXPECT_EQ(f.current(), "Module.net.b1.Block.forward.0") << "Left on a leaf steps to its parent";
    QTest::keyClick(&f.view, Qt::Key_Left);
    EXPECT_EQ(f.shown(), kNetTopOpen) << "Left closes an open node";
    EXPECT_EQ(f.current(), "Module.net.b1.Block.forward.0");
    QTest::keyClick(&f.view, Qt::Key_Left);
    QTest::keyClick(&f.view, Qt::Key_Minus);
    EXPECT_EQ(f.current(), "Module.net.Net.forward.0");
    EXPECT_EQ(f.shown(), kNetCollapsed);
    QTest::keyClick(&f.view, Qt::Key_Asterisk);
    EXPECT_EQ(f.shown(), printModel(f.model)) << "* opens the whole subtree";
    EXPECT_EQ(f.current(), "Module.net.Net.forward.0");
    f.view.collapseAll();
    EXPECT_EQ(f.shown(), kNetCollapsed);
    f.view.expandAll();
    EXPECT_EQ(f.shown(), printModel(f.model));
}

TEST(InlineTreeView, ExpandsAndCollapsesByClicks)
{
    NetInAView f;
    f.view.setCurrentIndex(f.rows.mapFromNode(f.t.node("Functional.linear.0.backward")));
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, f.arrowOf("Module.net.Net.forward.0"));
    EXPECT_EQ(f.shown(), kNetTopOpen) << "a click on the arrow opens";
    EXPECT_EQ(f.current(), "Functional.linear.0.backward") << "and does not select";
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, f.textOf("Module.net.b0.Block.forward.0"));
    EXPECT_EQ(f.current(), "Module.net.b0.Block.forward.0") << "a click on the name selects";
    EXPECT_EQ(f.shown(), kNetTopOpen) << "and does not open";
    QTest::mouseDClick(f.view.viewport(), Qt::LeftButton, {}, f.textOf("Module.net.b0.Block.forward.0"));
    EXPECT_EQ(f.shown(), "Module.net.Net.forward.0 pass error 1\n"
                         "  Module.net.b0.Block.forward.0 pass pass 0\n"
                         "    Functional.linear.0.forward pass pass 0\n"
                         "    Functional.relu.0.forward pass pass 0\n"
                         "  Module.net.b1.Block.forward.0 pass error 1\n"
                         "Functional.linear.0.backward warning warning 0\n")
        << "a double click opens";
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, f.arrowOf("Module.net.Net.forward.0"));
    EXPECT_EQ(f.shown(), kNetCollapsed) << "a click on an open arrow closes";
    EXPECT_EQ(f.current(), "Module.net.Net.forward.0") << "the current row was inside: its ancestor is current";
    QTest::mouseClick(f.view.viewport(), Qt::LeftButton, {}, f.arrowOf("Module.net.Net.forward.0"));
    EXPECT_TRUE(f.rows.isExpanded(f.t.node("Module.net.b0.Block.forward.0"))) << "expansion is kept below";
    EXPECT_EQ(f.shown(), "Module.net.Net.forward.0 pass error 1\n"
                         "  Module.net.b0.Block.forward.0 pass pass 0\n"
                         "    Functional.linear.0.forward pass pass 0\n"
                         "    Functional.relu.0.forward pass pass 0\n"
                         "  Module.net.b1.Block.forward.0 pass error 1\n"
                         "Functional.linear.0.backward warning warning 0\n");
}

TEST(InlineTreeView, KeepsTheCurrentNodeAcrossFilters)
{
    NetInAView f;
    const NodeId gelu = f.t.node("Functional.gelu.0.forward");
    ASSERT_TRUE(f.view.showNode(gelu));
    EXPECT_EQ(f.current(), "Functional.gelu.0.forward");
    EXPECT_TRUE(f.rows.isExpanded(f.t.node("Module.net.b1.Block.forward.0"))) << "its ancestors were opened";
    f.rows.setStatusMask(TreeRowsModel::statusBit(Status::Error));
    EXPECT_EQ(f.shown(), kOnlyGelu);
    EXPECT_EQ(f.current(), "Functional.gelu.0.forward") << "kept by a filter that shows it";
    EXPECT_EQ(f.view.currentIndex().row(), 2);
    EXPECT_TRUE(f.view.selectionModel()->isRowSelected(2, {}));
    f.rows.setNameFilter(QStringLiteral("relu"));
    EXPECT_TRUE(f.shown().empty()) << "relu passes";
    EXPECT_EQ(f.current(), "(none)");
    f.rows.setStatusMask(TreeRowsModel::kAllStatuses);
    EXPECT_EQ(f.current(), "(none)") << "gelu is still filtered out";
    f.rows.clearFilters();
    EXPECT_EQ(f.current(), "Functional.gelu.0.forward") << "back once the filter that hid it is gone";
    EXPECT_TRUE(f.view.selectionModel()->isRowSelected(f.view.currentIndex().row(), {}));
}

TEST(InlineTreeView, StreamedUpdatesRecolourAndRefilter)
{
    NetInAView f;
    f.view.expandAll();
    const NodeId relu = f.t.node("Functional.relu.0.forward");
    const QModelIndex reluRow = f.rows.mapFromNode(relu, CompareTreeModel::StatusColumn);
    ASSERT_TRUE(reluRow.isValid());
    QSignalSpy changed(&f.rows, &QAbstractItemModel::dataChanged);
    session::StatusUpdate update;
    update.nodes = { relu.value };
    update.own = { Status::Error };
    f.model.applyUpdate(update);
    bool signalled = false;
    for (const QList<QVariant>& args : changed) {
        const QModelIndex from = args[0].value<QModelIndex>();
        const QModelIndex to = args[1].value<QModelIndex>();
        signalled = signalled || (from.row() <= reluRow.row() && reluRow.row() <= to.row());
    }
    EXPECT_TRUE(signalled) << "relu's row is signalled";
    EXPECT_EQ(reluRow.data(Qt::BackgroundRole).value<QBrush>().color(),
              ui::statuspalette::fill(f.model.band(relu), false));
    EXPECT_EQ(Status(reluRow.data(CompareTreeModel::OwnStatusRole).toInt()), Status::Error);

    f.rows.setStatusMask(TreeRowsModel::statusBit(Status::Error));
    EXPECT_EQ(f.shown(), "Module.net.Net.forward.0 pass error 2\n"
                         "  Module.net.b0.Block.forward.0 pass error 1\n"
                         "    Functional.relu.0.forward error error 0\n"
                         "  Module.net.b1.Block.forward.0 pass error 1\n"
                         "    Functional.gelu.0.forward error error 0\n");
    update.own = { Status::Pass };
    f.model.applyUpdate(update);
    EXPECT_EQ(f.shown(), kOnlyGelu) << "relu and its block leave once it passes";
    // The whole table at once (a bulk change) re-filters too.
    f.model.setStatus(nullptr);
    EXPECT_TRUE(f.shown().empty());
    f.model.setStatus(statusTable(f.t, f.t.own));
    EXPECT_EQ(f.shown(), kOnlyGelu);
}

TEST(InlineTreeView, Screenshot)
{
    NetInAView f;
    f.view.expandAll();
    f.view.showNode(f.t.node("Functional.gelu.0.forward"));
    f.view.collapse(f.rows.mapFromNode(f.t.node("Module.net.b0.Block.forward.0")));
    QCoreApplication::processEvents();
    const QImage image = f.view.grab().toImage();
    EXPECT_TRUE(image.save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/treeview-inline.png")));
    // The indentation takes the row's colour: the warning row is filled left of its name too.
    const QRect backward = f.view.visualRect(f.rows.mapFromNode(f.t.node("Functional.linear.0.backward")));
    const QPoint left = f.view.viewport()->mapTo(&f.view, QPoint(backward.left() + 2, backward.center().y()));
    EXPECT_EQ(image.pixelColor(left * image.devicePixelRatio()),
              ui::statuspalette::fill(f.model.band(f.t.node("Functional.linear.0.backward")), false));

    // The dark palette: fills and arrows in the dark colours (looked at by eye: arrows in the text colour).
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
    dark.setColor(QPalette::Button, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::ButtonText, QColor(0xe0, 0xe0, 0xe0));
    f.view.setPalette(dark);
    f.model.setDarkPalette(true);
    QCoreApplication::processEvents();
    const QImage darkImage = f.view.grab().toImage();
    EXPECT_TRUE(darkImage.save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/treeview-inline-dark.png")));
    EXPECT_EQ(darkImage.pixelColor(left * darkImage.devicePixelRatio()),
              ui::statuspalette::fill(f.model.band(f.t.node("Functional.linear.0.backward")), true));
}

TEST(InlineNodeSearch, FindsKeysInDisplayOrder)
{
    const InlineTree t = buildTree(kNet);
    const NodeSearch search(t.skeleton->tree);
    EXPECT_EQ(keysOf(t, search.displayOrder()),
              (std::vector<std::string> { "Module.net.Net.forward.0", "Module.net.b0.Block.forward.0",
                                          "Functional.linear.0.forward", "Functional.relu.0.forward",
                                          "Module.net.b1.Block.forward.0", "Functional.linear.1.forward",
                                          "Functional.gelu.0.forward", "Tensor.reshape.0.forward",
                                          "Functional.linear.0.backward" }));
    EXPECT_EQ(keysOf(t, search.find(QStringLiteral("linear")).nodes),
              (std::vector<std::string> { "Functional.linear.0.forward", "Functional.linear.1.forward",
                                          "Functional.linear.0.backward" }));
    EXPECT_TRUE(search.find(QStringLiteral("LINEAR"), { false, true }).nodes.empty()) << "case-sensitive";
    EXPECT_EQ(keysOf(t, search.find(QStringLiteral("^Module\\..*b1"), { true, false }).nodes),
              (std::vector<std::string> { "Module.net.b1.Block.forward.0" }));
    const auto bad = search.find(QStringLiteral("[gelu"), { true, false });
    EXPECT_FALSE(bad.valid());
    EXPECT_TRUE(bad.nodes.empty());
    EXPECT_TRUE(search.find(QStringLiteral("softmax")).nodes.empty());
}

} // namespace
