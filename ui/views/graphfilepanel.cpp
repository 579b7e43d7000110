// SPDX-License-Identifier: Apache-2.0
#include "ui/views/graphfilepanel.h"

#include "core/graph/graphreader.h"
#include "ui/models/graphfilemodel.h"
#include "ui/models/graphsides.h"
#include "ui/panels/searchbar.h"

#include <QComboBox>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTextBrowser>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <thread>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString esc(const std::string& s)
{
    return toQ(s).toHtmlEscaped();
}

// The scheme of the matched-node links in the details: node:<graph index>/<node name>.
const QString kNodeScheme = QStringLiteral("node");

/// The most levels the tree shows above a selected node: a deeper node is shown under its ancestor this many levels
/// up (the tree's root index). QTreeView's cost of opening a chain of boxes grows with the square of its length (each
/// expansion updates every ancestor), so a file 40,000 levels deep held the window for minutes; and past a few dozen
/// levels the indentation pushes the names out of the column anyway.
constexpr std::size_t kMaxShownDepth = 16;

/// The most micro steps the chooser lists (fillMicroBox).
constexpr std::size_t kMaxListedMicroSteps = 1000;

/// input_data / output_data as one table: a column per parameter (named by its tail after the node's name), a row
/// per key in first-seen order (msprobe's compare adds some twenty keys; parameters are few).
QString paramsTable(const QString& title, const std::string& nodeName, const std::string& json)
{
    QString html = QStringLiteral("<h4>%1</h4>").arg(title.toHtmlEscaped());
    if (json.empty() || json == "{}")
        return html + QStringLiteral("<p>—</p>");
    const auto params = graph::parseParams(json);
    if (!params)
        return html + QStringLiteral("<pre>%1</pre>").arg(esc(json));
    std::vector<std::string> keys;
    for (const graph::Param& p : *params)
        for (const auto& [k, v] : p.values)
            if (std::find(keys.begin(), keys.end(), k) == keys.end())
                keys.push_back(k);
    html += QStringLiteral("<table border='1' cellspacing='0' cellpadding='2'><tr><th></th>");
    for (const graph::Param& p : *params) {
        std::string label = p.name;
        if (label.size() > nodeName.size() + 1 && label.compare(0, nodeName.size(), nodeName) == 0)
            label = label.substr(nodeName.size() + 1);
        html += QStringLiteral("<th>%1</th>").arg(esc(label));
    }
    html += QStringLiteral("</tr>");
    for (const std::string& k : keys) {
        // Keys are names: never broken inside either ("d/t/y/p/e" down a narrow pane).
        html += QStringLiteral("<tr><td style='white-space:nowrap'><b>%1</b></td>").arg(esc(k));
        for (const graph::Param& p : *params) {
            QString cell;
            for (const auto& [key, value] : p.values)
                if (key == k)
                    cell = esc(value);
            // A number is never broken inside (it wrapped mid-digit, issue 36 item 12).
            html += QStringLiteral("<td style='white-space:nowrap'>%1</td>").arg(cell);
        }
        html += QStringLiteral("</tr>");
    }
    return html + QStringLiteral("</table>");
}

} // namespace

GraphFilePanel::GraphFilePanel(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("graphFilePanel");
    m_model = new GraphFileModel(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_header = new QLabel(this);
    m_header->setObjectName("graphFileHeader");
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_header);

    auto* choosers = new QHBoxLayout;
    m_graphLabel = new QLabel(this);
    m_graphBox = new QComboBox(this);
    m_graphBox->setObjectName("graphChooser");
    m_graphBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_microLabel = new QLabel(this);
    m_microBox = new QComboBox(this);
    m_microBox->setObjectName("microStepChooser");
    m_graphLabel->setBuddy(m_graphBox);
    m_microLabel->setBuddy(m_microBox);
    choosers->addWidget(m_graphLabel);
    choosers->addWidget(m_graphBox, 1);
    choosers->addWidget(m_microLabel);
    choosers->addWidget(m_microBox);
    layout->addLayout(choosers);

    m_search = new SearchBar(this);
    layout->addWidget(m_search);

    m_depthNote = new QLabel(this);
    m_depthNote->setObjectName("graphDepthNote");
    m_depthNote->setWordWrap(true);
    m_depthNote->setVisible(false);
    connect(m_depthNote, &QLabel::linkActivated, this, [this] {
        const QString keep = selectedNodeName();
        m_tree->setRootIndex({});
        m_depthNote->setVisible(false);
        if (!keep.isEmpty())
            selectNode(keep);
    });
    layout->addWidget(m_depthNote);
    // A new graph (or micro step) resets the tree's root: the note goes with it.
    connect(m_model, &QAbstractItemModel::modelReset, m_depthNote, &QWidget::hide);

    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_tree = new QTreeView(m_splitter);
    m_tree->setObjectName("graphTree");
    m_tree->setModel(m_model);
    // A million rows: uniform heights keep layout and scrolling independent of the row count.
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(false);
    // The name takes the room; the other columns are short.
    // The name keeps a readable width (it shrank to "Mo…" beside the other columns, issue 36 item 12): it is
    // the user's to resize, the short columns follow it and the tree scrolls sideways when narrow.
    m_tree->header()->setStretchLastSection(true);
    m_tree->header()->setSectionResizeMode(GraphFileModel::NameColumn, QHeaderView::Interactive);
    m_tree->setColumnWidth(GraphFileModel::NameColumn, 320);
    for (const int c : { GraphFileModel::TypeColumn, GraphFileModel::PrecisionColumn })
        m_tree->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_details = new QTextBrowser(m_splitter);
    m_details->setObjectName("graphNodeDetails");
    m_details->setOpenLinks(false);
    m_splitter->addWidget(m_tree);
    m_splitter->addWidget(m_details);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    layout->addWidget(m_splitter, 1);

    connect(m_graphBox, &QComboBox::currentIndexChanged, this, &GraphFilePanel::onGraphChosen);
    connect(m_microBox, &QComboBox::currentIndexChanged, this, &GraphFilePanel::onMicroChosen);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this, &GraphFilePanel::onCurrentChanged);
    connect(m_details, &QTextBrowser::anchorClicked, this, &GraphFilePanel::onLink);
    connect(m_search, &SearchBar::searchRequested, this, &GraphFilePanel::onSearch);
    connect(m_search, &SearchBar::nextRequested, this, [this] { stepSearch(1); });
    connect(m_search, &SearchBar::previousRequested, this, [this] { stepSearch(-1); });
    connect(m_search, &SearchBar::dismissed, m_tree, qOverload<>(&QWidget::setFocus));
    retranslate();
}

GraphFilePanel::~GraphFilePanel()
{
    // As in setFile: a million nodes are freed on a thread of their own (closing the window does not wait for it).
    m_model->clear();
    if (m_file && m_file.use_count() == 1)
        std::thread([last = std::move(m_file)]() mutable { last.reset(); }).detach();
}

void GraphFilePanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void GraphFilePanel::retranslate()
{
    m_graphLabel->setText(tr("&Graph:"));
    m_microLabel->setText(tr("&Micro step:"));
    if (m_microBox->count() > 0)
        m_microBox->setItemText(0, tr("all"));
    if (!m_file) {
        m_header->setText(tr("No graph file is open."));
        return;
    }
    const graph::GraphConfig& c = m_file->config;
    m_header->setText(tr("<b>%1</b> — %2 %3 graph%4, %n graph(s)", nullptr, static_cast<int>(m_file->graphs.size()))
                          .arg(QFileInfo(toQ(m_file->path)).fileName().toHtmlEscaped(),
                               toQ(std::string(graph::versionName(m_file->version))), toQ(c.graphType).toHtmlEscaped(),
                               c.task.empty() ? QString() : tr(", task %1").arg(toQ(c.task).toHtmlEscaped())));
    m_header->setToolTip(toQ(m_file->path));
    fillGraphBox();
    // Texts made from data when asked (headers, verdicts) and the details: again in the language in force.
    emit m_model->headerDataChanged(Qt::Horizontal, 0, GraphFileModel::ColumnCount - 1);
    m_tree->viewport()->update();
    showDetails(m_model->nodeOf(m_tree->currentIndex()));
}

void GraphFilePanel::clear()
{
    setFile(nullptr, {});
}

void GraphFilePanel::setFile(std::shared_ptr<const graph::GraphFile> file, std::vector<graph::GraphSummary> summaries)
{
    // The file shown before goes away on a thread of its own: freeing a million nodes holds a thread for a
    // fraction of a second, and the window must not be that thread. The model lets go of it first (below).
    std::shared_ptr<const graph::GraphFile> previous = std::move(m_file);
    m_file = std::move(file);
    m_summaries = std::move(summaries);
    if (m_file && m_summaries.size() != m_file->graphs.size()) {
        m_summaries.clear();
        for (const graph::Graph& g : m_file->graphs)
            m_summaries.push_back(graph::summarize(*m_file, g));
    }
    m_hits.clear();
    m_hitIndex = -1;
    m_model->setGraph(m_file, m_file && !m_file->graphs.empty() ? 0 : -1);
    retranslate();
    fillMicroBox();
    showDetails(std::nullopt);
    if (previous && previous.use_count() == 1 && previous != m_file)
        std::thread([last = std::move(previous)]() mutable { last.reset(); }).detach();
}

void GraphFilePanel::fillGraphBox()
{
    const int keep = m_model->graphIndex();
    m_filling = true;
    m_graphBox->clear();
    if (m_file) {
        for (std::size_t i = 0; i < m_file->graphs.size(); ++i) {
            const graph::Graph& g = m_file->graphs[i];
            m_graphBox->addItem(tr("step %1 · rank %2 · %3 (%n node(s))", nullptr, static_cast<int>(g.nodes.size()))
                                    .arg(g.step)
                                    .arg(g.rank)
                                    .arg(g.side == graph::Side::Npu ? tr("NPU") : tr("bench")),
                                static_cast<int>(i));
        }
    }
    m_graphBox->setCurrentIndex(std::max(0, m_graphBox->findData(keep)));
    m_graphBox->setEnabled(m_graphBox->count() > 1);
    m_filling = false;
}

void GraphFilePanel::fillMicroBox()
{
    m_filling = true;
    m_microBox->clear();
    m_microBox->addItem(tr("all"));
    // msprobe's micro steps are a handful; a file may hold a million. The box lists the first kMaxListedMicroSteps
    // (and the chosen one): a list of a million entries would take seconds and hundreds of MB to build and measure.
    if (const graph::Graph* g = m_model->graph()) {
        const std::size_t listed = std::min(g->microSteps.size(), kMaxListedMicroSteps);
        for (std::size_t i = 0; i < listed; ++i)
            m_microBox->addItem(QString::number(g->microSteps[i]), QVariant::fromValue<qlonglong>(g->microSteps[i]));
        const auto chosen = m_model->microStep();
        if (chosen && m_microBox->findData(QVariant::fromValue<qlonglong>(*chosen)) < 0)
            m_microBox->addItem(QString::number(*chosen), QVariant::fromValue<qlonglong>(*chosen));
        if (g->microSteps.size() > listed) {
            m_microBox->addItem(tr("(%n more not listed)", nullptr, static_cast<int>(g->microSteps.size() - listed)));
            if (auto* items = qobject_cast<QStandardItemModel*>(m_microBox->model()))
                items->item(m_microBox->count() - 1)->setEnabled(false);
        }
    }
    const auto chosen = m_model->microStep();
    m_microBox->setCurrentIndex(chosen ? std::max(0, m_microBox->findData(QVariant::fromValue<qlonglong>(*chosen))) : 0);
    m_microBox->setEnabled(m_microBox->count() > 2);
    m_filling = false;
}

bool GraphFilePanel::showGraph(int graphIndex)
{
    if (!m_file || graphIndex < 0 || static_cast<std::size_t>(graphIndex) >= m_file->graphs.size())
        return false;
    if (graphIndex != m_model->graphIndex() || m_model->microStep()) {
        m_hits.clear();
        m_hitIndex = -1;
        m_model->setGraph(m_file, graphIndex);
        fillMicroBox();
        showDetails(std::nullopt);
    }
    m_filling = true;
    m_graphBox->setCurrentIndex(std::max(0, m_graphBox->findData(graphIndex)));
    m_filling = false;
    if (!m_search->pattern().isEmpty())
        onSearch(m_search->pattern(), m_search->isRegex(), m_search->isCaseSensitive());
    return true;
}

int GraphFilePanel::currentGraph() const
{
    return m_model->graphIndex();
}

void GraphFilePanel::setMicroStep(std::optional<std::int64_t> microStep)
{
    if (!m_file || microStep == m_model->microStep())
        return;
    const QString keep = selectedNodeName();
    m_model->setGraph(m_file, m_model->graphIndex(), microStep);
    fillMicroBox();
    if (keep.isEmpty() || !selectNode(keep))
        showDetails(std::nullopt);
}

void GraphFilePanel::onGraphChosen(int comboIndex)
{
    if (m_filling || comboIndex < 0)
        return;
    const QString keep = selectedNodeName();
    showGraph(m_graphBox->itemData(comboIndex).toInt());
    // The same node on the other side (or another step) when it is there: comparing a node across graphs.
    if (!keep.isEmpty())
        selectNode(keep);
}

void GraphFilePanel::onMicroChosen(int comboIndex)
{
    if (m_filling || comboIndex < 0)
        return;
    const QVariant v = m_microBox->itemData(comboIndex);
    setMicroStep(v.isValid() ? std::optional<std::int64_t>(v.toLongLong()) : std::nullopt);
}

void GraphFilePanel::selectIndex(std::uint32_t node)
{
    QModelIndex index = m_model->indexOfNode(node);
    if (!index.isValid() && m_model->microStep()) {
        // A node of another micro step: show them all rather than refuse.
        m_model->setGraph(m_file, m_model->graphIndex());
        fillMicroBox();
        index = m_model->indexOfNode(node);
    }
    if (!index.isValid())
        return;
    std::vector<QModelIndex> chain; // the parent first
    for (QModelIndex p = index.parent(); p.isValid(); p = p.parent())
        chain.push_back(p);
    // A node deeper than kMaxShownDepth is shown under an ancestor that many levels up (kept while it is one of the
    // node's nearest ancestors, so that moving through a deep part does not re-root the tree at every step).
    const QModelIndex shownRoot = m_tree->rootIndex();
    QModelIndex root;
    if (chain.size() >= kMaxShownDepth) {
        const auto nearest = chain.begin() + static_cast<std::ptrdiff_t>(kMaxShownDepth);
        root = shownRoot.isValid() && std::find(chain.begin(), nearest, shownRoot) != nearest ? shownRoot
                                                                                               : chain[kMaxShownDepth - 1];
    }
    if (root != shownRoot)
        m_tree->setRootIndex(root);
    m_depthNote->setVisible(root.isValid());
    if (root.isValid())
        m_depthNote->setText(tr("This part of the graph is %n level(s) deep: the tree shows it under %1. "
                                "<a href='top'>Show from the top</a>",
                                nullptr, static_cast<int>(chain.size()))
                                 .arg(esc(m_model->graph()->nodes[*m_model->nodeOf(root)].name)));
    // The columns sized to their contents would measure up to a thousand rows at every expansion: fixed while the
    // chain opens, measured once after.
    QHeaderView* header = m_tree->header();
    std::vector<QHeaderView::ResizeMode> modes;
    for (int c = 0; c < header->count(); ++c) {
        modes.push_back(header->sectionResizeMode(c));
        if (modes.back() == QHeaderView::ResizeToContents)
            header->setSectionResizeMode(c, QHeaderView::Interactive);
    }
    const auto stop = root.isValid() ? std::find(chain.begin(), chain.end(), root) : chain.end();
    for (auto it = std::make_reverse_iterator(stop); it != chain.rend(); ++it)
        m_tree->expand(*it);
    for (int c = 0; c < header->count(); ++c)
        if (modes[static_cast<std::size_t>(c)] == QHeaderView::ResizeToContents)
            header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_tree->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_tree->scrollTo(index, QAbstractItemView::PositionAtCenter);
    // Only up and down: a sideways scroll cut every name's start ("odule.block…").
    m_tree->horizontalScrollBar()->setValue(0);
}

bool GraphFilePanel::selectNode(const QString& name)
{
    const graph::Graph* g = m_model->graph();
    if (!g)
        return false;
    const auto node = g->find(name.toStdString());
    if (!node)
        return false;
    selectIndex(*node);
    return true;
}

bool GraphFilePanel::selectFirstFailure()
{
    if (!m_file || m_model->graphIndex() < 0)
        return false;
    int at = m_model->graphIndex();
    const graph::Graph& shown = m_file->graphs[static_cast<std::size_t>(at)];
    if (shown.side == graph::Side::Bench)
        for (std::size_t i = 0; i < m_file->graphs.size(); ++i)
            if (m_file->graphs[i].side == graph::Side::Npu && m_file->graphs[i].step == shown.step
                && m_file->graphs[i].rank == shown.rank)
                at = static_cast<int>(i);
    // Nothing red (a statistics compare often has only yellow nodes): the first warning, as a pair of dumps lands
    // on its first failing node whatever its colour (issue 36 item 7); firstFailureLine() says which it was.
    auto first = m_summaries[static_cast<std::size_t>(at)].firstFailing;
    if (!first)
        first = firstWarning(at);
    if (!first)
        return false;
    showGraph(at);
    selectIndex(*first);
    m_tree->setFocus();
    return true;
}

std::optional<std::uint32_t> GraphFilePanel::firstWarning(int graphIndex) const
{
    if (!m_file || graphIndex < 0 || static_cast<std::size_t>(graphIndex) >= m_file->graphs.size())
        return std::nullopt;
    const graph::Graph& g = m_file->graphs[static_cast<std::size_t>(graphIndex)];
    if (g.side != graph::Side::Npu || !m_file->isCompare())
        return std::nullopt;
    const auto worst = m_file->worstBand();
    // Nodes are in node_order: the first found ran first.
    for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
        if (statusOfGraphNode(*m_file, g.nodes[i], worst) == session::Status::Warning)
            return i;
    return std::nullopt;
}

QString GraphFilePanel::selectedNodeName() const
{
    const auto node = m_model->nodeOf(m_tree->currentIndex());
    if (!node || !m_model->graph())
        return {};
    return toQ(m_model->graph()->nodes[*node].name);
}

QString GraphFilePanel::firstFailureLine() const
{
    if (!m_file || m_model->graphIndex() < 0)
        return {};
    const graph::Graph& g = m_file->graphs[static_cast<std::size_t>(m_model->graphIndex())];
    const auto first = m_summaries[static_cast<std::size_t>(m_model->graphIndex())].firstFailing;
    if (!m_file->isCompare())
        return tr("%1: a build graph (no verdicts).").arg(toQ(g.id));
    if (!first) {
        if (g.side != graph::Side::Npu)
            return {};
        if (const auto warning = firstWarning(m_model->graphIndex()))
            return tr("%1: no failing (red) node; the first warning (yellow) is %2 (node_order %3), selected.")
                .arg(toQ(g.id), toQ(g.nodes[*warning].name))
                .arg(*warning);
        return tr("%1: no failing node.").arg(toQ(g.id));
    }
    return tr("%1: first failing node %2 (node_order %3).").arg(toQ(g.id), toQ(g.nodes[*first].name)).arg(*first);
}

QStringList GraphFilePanel::report() const
{
    QStringList lines;
    if (!m_file)
        return lines;
    const bool compare = m_file->isCompare(); // once: it looks at every graph
    for (std::size_t i = 0; i < m_file->graphs.size(); ++i) {
        const graph::Graph& g = m_file->graphs[i];
        const graph::GraphSummary& s = m_summaries[i];
        QString line = QStringLiteral("%1: step %2, rank %3, %4, %5 nodes")
                           .arg(toQ(g.id))
                           .arg(g.step)
                           .arg(g.rank)
                           .arg(toQ(std::string(graph::sideName(g.side))))
                           .arg(s.nodes);
        if (compare && g.side == graph::Side::Npu) {
            for (std::size_t b = 0; b < m_file->colours.size() && b < s.perBand.size(); ++b)
                if (m_file->colours[b].lo)
                    line += QStringLiteral(", %1 %2").arg(toQ(m_file->colours[b].colour)).arg(s.perBand[b]);
            line += QStringLiteral(", unmatched %1").arg(s.unmatched);
            line += s.firstFailing ? QStringLiteral(", first failing %1 (node_order %2)")
                                         .arg(toQ(g.nodes[*s.firstFailing].name))
                                         .arg(*s.firstFailing)
                                   : QStringLiteral(", first failing none");
        } else if (compare) {
            line += QStringLiteral(", matched %1, unmatched %2").arg(s.bench).arg(s.unmatched);
        }
        lines << line;
    }
    return lines;
}

void GraphFilePanel::onCurrentChanged()
{
    showDetails(m_model->nodeOf(m_tree->currentIndex()));
    const QString name = selectedNodeName();
    if (!name.isEmpty())
        emit nodeSelected(name);
}

QString GraphFilePanel::detailsText() const
{
    return m_details->toPlainText();
}

void GraphFilePanel::showDetails(std::optional<std::uint32_t> nodeIndex)
{
    const graph::Graph* g = m_model->graph();
    if (!m_file || !g || !nodeIndex) {
        m_details->setHtml(m_file ? tr("<p>Select a node to see its data.</p>") : QString());
        return;
    }
    const graph::Node& n = g->nodes[*nodeIndex];
    const QColor colour = GraphFileModel::colourOf(*m_file, n);
    QString html = QStringLiteral("<h3>%1</h3><table>").arg(esc(n.name));
    const auto row = [&html](const QString& key, const QString& valueHtml) {
        html += QStringLiteral("<tr><td style='white-space:nowrap'><b>%1</b>&nbsp;</td><td>%2</td></tr>")
                    .arg(key.toHtmlEscaped(), valueHtml);
    };
    row(tr("Graph"), esc(g->id));
    row(tr("Type"), GraphFileModel::typeName(n.type).toHtmlEscaped());
    row(tr("node_order"), QString::number(*nodeIndex));
    row(tr("Micro step"), QString::number(n.microStep));
    if (n.precision)
        row(tr("precision_index"),
            (n.precisionIsInteger ? QString::number(static_cast<qlonglong>(*n.precision)) : QString::number(*n.precision, 'g', 10)));
    const QString verdict = GraphFileModel::verdictOf(*m_file, n);
    row(tr("Verdict"), QStringLiteral("<span style='background-color:%1;color:black'>&nbsp;&nbsp;&nbsp;&nbsp;</span> %2")
                           .arg(colour.name(), verdict.isEmpty() ? tr("no value") : verdict.toHtmlEscaped()));
    if (const QString band = GraphFileModel::bandText(*m_file, n); !band.isEmpty())
        row(tr("msprobe's legend"), band.toHtmlEscaped());
    if (!n.matchedLink.empty()) {
        // The link names the matched node's ancestors and the node last; it lives in the other side's graph.
        QString target;
        for (std::size_t i = 0; i < m_file->graphs.size(); ++i) {
            const graph::Graph& o = m_file->graphs[i];
            if (o.side != g->side && o.step == g->step && o.rank == g->rank && o.find(n.matchedLink.back()))
                target = QStringLiteral("%1:%2/%3").arg(kNodeScheme).arg(i).arg(QString::fromUtf8(QUrl::toPercentEncoding(toQ(n.matchedLink.back()))));
        }
        const QString name = esc(n.matchedLink.back());
        row(tr("Matched node"), target.isEmpty() ? name : QStringLiteral("<a href='%1'>%2</a>").arg(target, name));
    } else if (m_file->isCompare()) {
        row(tr("Matched node"), tr("none (unmatched)"));
    }
    if (n.modified)
        row(tr("Manual match"), tr("yes (modified)"));
    if (!n.upNode.empty())
        row(tr("Parent"), esc(n.upNode));
    row(tr("Children"), QString::number(n.children.size()));
    if (!n.overflowLevel.empty())
        row(tr("Overflow level"), esc(n.overflowLevel));
    html += QStringLiteral("</table>");

    std::string input = n.inputData;
    std::string output = n.outputData;
    if (m_file->dataDeferred) {
        // One row by its primary key: the reader left the JSON of a large db where it is.
        auto fetched = graph::readNodeData(*m_file, *g, *nodeIndex);
        if (fetched) {
            input = std::move(fetched->inputData);
            output = std::move(fetched->outputData);
        } else {
            html += QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("The node's data cannot be read:"), esc(fetched.error().format()));
        }
    }
    html += paramsTable(tr("input_data"), n.name, input);
    html += paramsTable(tr("output_data"), n.name, output);
    html += QStringLiteral("<h4>%1</h4>").arg(tr("Stack"));
    if (n.stack >= 0 && static_cast<std::size_t>(n.stack) < g->stacks.size() && !g->stacks[static_cast<std::size_t>(n.stack)].empty()) {
        html += QStringLiteral("<pre>");
        for (const std::string& frame : g->stacks[static_cast<std::size_t>(n.stack)])
            html += esc(frame) + '\n';
        html += QStringLiteral("</pre>");
    } else {
        html += QStringLiteral("<p>—</p>");
    }
    m_details->setHtml(html);
}

void GraphFilePanel::onLink(const QUrl& url)
{
    if (url.scheme() != kNodeScheme)
        return;
    const QString rest = url.path();
    const auto slash = rest.indexOf('/');
    if (slash < 0)
        return;
    bool ok = false;
    const int graphIndex = rest.left(slash).toInt(&ok);
    if (!ok || !showGraph(graphIndex))
        return;
    selectNode(QUrl::fromPercentEncoding(rest.mid(slash + 1).toUtf8()));
}

void GraphFilePanel::onSearch(const QString& pattern, bool regex, bool caseSensitive)
{
    m_hits.clear();
    m_hitIndex = -1;
    const graph::Graph* g = m_model->graph();
    if (!g || pattern.isEmpty()) {
        m_search->setHits(0, 0);
        return;
    }
    const Qt::CaseSensitivity cs = caseSensitive ? Qt::CaseSensitive : Qt::CaseInsensitive;
    QRegularExpression re;
    if (regex) {
        re.setPattern(pattern);
        if (!caseSensitive)
            re.setPatternOptions(QRegularExpression::CaseInsensitiveOption);
        if (!re.isValid()) {
            m_search->setHits(0, 0);
            return;
        }
    }
    // Hits in execution order (node_order), as the compare tree's search orders them. A plain pattern is matched on
    // the UTF-8 names themselves (ASCII case folding, as msprobe's names are ASCII): a million QString conversions
    // would hold the window for most of a second.
    const std::string needle = pattern.toStdString();
    const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    for (std::uint32_t i = 0; i < g->nodes.size(); ++i) {
        const std::string& name = g->nodes[i].name;
        bool hit = false;
        if (regex)
            hit = re.match(toQ(name)).hasMatch();
        else if (cs == Qt::CaseSensitive)
            hit = name.find(needle) != std::string::npos;
        else
            hit = std::search(name.begin(), name.end(), needle.begin(), needle.end(),
                              [&](char a, char b) { return fold(a) == fold(b); })
                != name.end();
        if (hit)
            m_hits.push_back(i);
    }
    if (m_hits.empty()) {
        m_search->setHits(0, 0);
        return;
    }
    m_hitIndex = 0;
    selectIndex(m_hits.front());
    m_search->setHits(1, static_cast<int>(m_hits.size()));
}

void GraphFilePanel::stepSearch(int delta)
{
    if (m_hits.empty())
        return;
    const int n = static_cast<int>(m_hits.size());
    m_hitIndex = ((m_hitIndex + delta) % n + n) % n;
    selectIndex(m_hits[static_cast<std::size_t>(m_hitIndex)]);
    m_search->setHits(m_hitIndex + 1, n);
}

} // namespace probescope::ui
