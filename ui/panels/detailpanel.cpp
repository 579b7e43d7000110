// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/detailpanel.h"

#include "core/compare/verdict/firstfailure.h"
#include "ui/models/statuspalette.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTransposeProxyModel>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <optional>

namespace probescope::ui {

using session::Status;

namespace {

QString fromStd(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString kindText(dump::EntryKind kind)
{
    switch (kind) {
    case dump::EntryKind::Api:
        return DetailPanel::tr("API");
    case dump::EntryKind::Module:
        return DetailPanel::tr("Module");
    case dump::EntryKind::ParametersGrad:
        return DetailPanel::tr("Parameter gradients");
    case dump::EntryKind::Debug:
        return DetailPanel::tr("Debug value");
    case dump::EntryKind::Legacy:
        return DetailPanel::tr("API (ptdbg_ascend)");
    case dump::EntryKind::Unknown:
        break;
    }
    return DetailPanel::tr("Unknown kind");
}

QString directionText(dump::Direction d)
{
    switch (d) {
    case dump::Direction::Forward:
        return DetailPanel::tr("forward");
    case dump::Direction::Backward:
        return DetailPanel::tr("backward");
    case dump::Direction::None:
        break;
    }
    return DetailPanel::tr("no direction");
}

QPlainTextEdit* makeMonospaceText(QWidget* parent)
{
    auto* t = new QPlainTextEdit(parent);
    t->setReadOnly(true);
    // Paths and stack frames are long: wrapped, they are read without scrolling sideways.
    t->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    t->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    t->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    t->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    return t;
}

// msprobe writes a frame as "File f.py, line 3, in g, \n code": one line for the place, one for the code.
QString framesText(const std::vector<std::string>& frames)
{
    QStringList lines;
    for (const std::string& f : frames) {
        QString frame = QString::fromStdString(f);
        frame.replace(QStringLiteral(", \n "), QStringLiteral("\n    "));
        frame.replace(QStringLiteral("\n "), QStringLiteral("\n    "));
        lines << frame;
    }
    return lines.join(QLatin1Char('\n'));
}

QString sanitizeTsvCell(QString text)
{
    text.replace(QLatin1Char('\t'), QLatin1Char(' '));
    text.replace(QLatin1Char('\r'), QLatin1Char(' '));
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return text;
}

} // namespace

DetailPanel::DetailPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);

    m_placeholder = new QLabel(this);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    outer->addWidget(m_placeholder);

    m_body = new QWidget(this);
    auto* body = new QVBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);

    m_key = new QLabel(m_body);
    QFont keyFont = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    keyFont.setBold(true);
    m_key->setFont(keyFont);
    m_key->setTextFormat(Qt::PlainText);
    m_key->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_key->setWordWrap(true);
    body->addWidget(m_key);

    m_facts = new QLabel(m_body);
    m_facts->setTextFormat(Qt::PlainText);
    m_facts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_facts->setWordWrap(true);
    body->addWidget(m_facts);

    auto* statusRow = new QHBoxLayout;
    m_statusIcon = new QLabel(m_body);
    m_status = new QLabel(m_body);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    statusRow->addWidget(m_statusIcon);
    statusRow->addWidget(m_status, 1);
    m_copyDetails = new QPushButton(m_body);
    statusRow->addWidget(m_copyDetails);
    body->addLayout(statusRow);

    m_reasonsLabel = new QLabel(m_body);
    m_reasonsLabel->setTextFormat(Qt::PlainText);
    m_reasonsLabel->setWordWrap(true);
    m_reasonsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    body->addWidget(m_reasonsLabel);

    auto* splitter = new QSplitter(Qt::Vertical, m_body);
    m_splitter = splitter;
    connect(splitter, &QSplitter::splitterMoved, this, [this] { m_userSizedSplitter = true; });
    splitter->installEventFilter(this);
    m_model = new NodeRowsModel(this);
    // A node has a few rows (input.0, output.0, ...) of some twenty fields: shown with the fields down and
    // the rows across, its figures fit the panel without scrolling sideways.
    m_fields = new QTransposeProxyModel(this);
    m_fields->setSourceModel(m_model);
    m_view = new QTableView(splitter);
    m_view->setModel(m_fields);
    m_view->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    m_view->horizontalHeader()->hide(); // the Leaf field heads each column
    m_view->installEventFilter(this);
    auto* copyAction = new QAction(m_view);
    m_copyAction = copyAction;
    copyAction->setShortcut(QKeySequence::Copy);
    copyAction->setShortcutContext(Qt::WidgetShortcut);
    m_view->addAction(copyAction);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(copyAction, &QAction::triggered, this, &DetailPanel::copySelection);
    // activated() covers double-click and Enter (and single click where the style activates on it).
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex& index) {
        if (index.isValid())
            emit rowActivated(m_model->tableRow(m_fields->mapToSource(index).row()));
    });
    m_tabs = new QTabWidget(splitter);
    m_npuStack = makeMonospaceText(m_tabs);
    m_benchStack = makeMonospaceText(m_tabs);
    m_dataFiles = makeMonospaceText(m_tabs);
    m_tabs->addTab(m_npuStack, QString());
    m_tabs->addTab(m_benchStack, QString());
    m_tabs->addTab(m_dataFiles, QString());
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    body->addWidget(splitter, 1);

    outer->addWidget(m_body, 1);
    connect(m_copyDetails, &QPushButton::clicked, this, &DetailPanel::copyDetails);
    retranslate();
    clear();
}

void DetailPanel::retranslate()
{
    m_placeholder->setText(tr("Select a node to see its rows, reasons and call stack."));
    m_copyDetails->setText(tr("Copy details"));
    m_copyDetails->setToolTip(tr("Copy the node, its reasons, rows and stacks as plain text"));
    m_view->setToolTip(tr("Double-click a column to open its tensors in the inspector"));
    m_copyAction->setText(tr("Copy"));
    m_tabs->setTabText(0, tr("NPU stack"));
    m_tabs->setTabText(1, tr("Bench stack"));
    m_tabs->setTabText(2, tr("Data files"));
    // The shown node's texts (facts, reasons, headers) are made in the language in force.
    if (m_analysis)
        setNode(m_analysis, m_node);
}

void DetailPanel::setNode(std::shared_ptr<const session::PairAnalysis> analysis, quint32 nodeId)
{
    if (!analysis || !analysis->skeleton || !analysis->skeleton->tree || !analysis->status
        || nodeId >= analysis->skeleton->tree->size()) {
        clear();
        return;
    }
    m_analysis = std::move(analysis);
    m_node = nodeId;
    m_model->setDarkTheme(statuspalette::isDark(palette()));
    m_model->setNode(m_analysis, nodeId);
    // msprobe's Err_message is the reasons list above the table, with the row it belongs to: not twice.
    const int err = m_model->columnOfTableColumn(QStringLiteral("Err_message"));
    for (int f = 0; f < m_fields->rowCount(); ++f)
        m_view->setRowHidden(f, f == err || (isSingleRun() && !m_model->isNpuSideColumn(f)));
    m_tabs->setTabVisible(m_tabs->indexOf(m_benchStack), !isSingleRun());
    m_view->resizeColumnsToContents();
    // Data file names can be very long; keep a column on screen, the tooltip has the rest.
    for (int c = 0; c < m_fields->columnCount(); ++c)
        m_view->setColumnWidth(c, std::min(m_view->columnWidth(c), 420));
    updateHeader();
    updateReasons();
    updateStacks();
    updateDataFiles();
    m_placeholder->hide();
    m_body->show();
    fitTableHeight();
    showFailingColumn();
}

int DetailPanel::failingColumn() const
{
    // The rows are the view's columns (transposed): the first failing one, else the first unmatched one.
    int unmatched = -1;
    for (int r = 0; r < m_model->rowCount(); ++r) {
        const Status s = m_model->rowStatus(r);
        if (session::isFailing(s))
            return m_fields->mapFromSource(m_model->index(r, 0)).column();
        if (s == Status::Unmatched && unmatched < 0)
            unmatched = m_fields->mapFromSource(m_model->index(r, 0)).column();
    }
    return unmatched;
}

std::optional<std::size_t> DetailPanel::tableRowOfColumn(int column) const
{
    if (!hasNode() || column < 0 || column >= m_fields->columnCount())
        return std::nullopt;
    return m_model->tableRow(m_fields->mapToSource(m_fields->index(0, column)).row());
}

void DetailPanel::showFailingColumn()
{
    // N, Shift+N and F land on a node for its failing leaf: its figures must be on screen, not past the right
    // edge where the previous node's scroll position or a row of wide input columns left them (issue 28).
    // The layout must be current for the scroll range to be right.
    m_view->horizontalScrollBar()->setValue(0);
    const int column = failingColumn();
    if (column < 0)
        return;
    const int viewport = m_view->viewport()->width();
    // Wider than the table: narrow it (the tooltip and Copy keep the whole text), so its left part is never cut.
    if (viewport > 40 && m_view->columnWidth(column) > viewport)
        m_view->setColumnWidth(column, viewport);
    m_view->doItemsLayout(); // the scroll range of the new columns, now rather than at the next event
    m_view->scrollTo(m_fields->index(0, column), QAbstractItemView::EnsureVisible);
}

void DetailPanel::fitTableHeight()
{
    // Most nodes have two to six rows: give the stacks the space an empty table would waste, until the
    // user drags the splitter (then their choice stays).
    if (m_userSizedSplitter)
        return;
    const int total = m_splitter->height() - m_splitter->handleWidth();
    if (total < 100)
        return;
    const int rows = std::max(m_fields->rowCount(), 2);
    const int wanted = m_view->horizontalHeader()->height() + rows * m_view->verticalHeader()->defaultSectionSize()
        + m_view->horizontalScrollBar()->sizeHint().height() + 2 * m_view->frameWidth() + 4;
    const int table = std::clamp(wanted, total / 4, total * 2 / 3);
    m_splitter->setSizes({ table, total - table });
}

bool DetailPanel::eventFilter(QObject* watched, QEvent* event)
{
    // The splitter's own resize: only then is its height the one to divide.
    if (watched == m_splitter && event->type() == QEvent::Resize && hasNode())
        fitTableHeight();
    // The table got its size (the tab was shown, the window laid out): the failing column goes on screen again.
    if (watched == m_view && event->type() == QEvent::Resize && hasNode())
        showFailingColumn();
    return QWidget::eventFilter(watched, event);
}

void DetailPanel::clear()
{
    m_analysis.reset();
    m_node = 0;
    m_reasons.clear();
    m_model->clear();
    m_key->clear();
    m_facts->clear();
    m_status->clear();
    m_statusIcon->clear();
    m_reasonsLabel->clear();
    m_npuStack->clear();
    m_benchStack->clear();
    m_dataFiles->clear();
    m_body->hide();
    m_placeholder->show();
}

void DetailPanel::setSingleRun(std::function<std::optional<RunNodeState>(quint32)> stateOf,
                               std::function<std::uint32_t(quint32)> withNanBelow)
{
    m_runStateOf = std::move(stateOf);
    m_runNanBelow = std::move(withNanBelow);
    if (m_analysis)
        setNode(m_analysis, m_node);
}

void DetailPanel::updateHeader()
{
    const session::PairSkeleton& sk = *m_analysis->skeleton;
    const tree::TreeNode& node = sk.tree->node(tree::NodeId { m_node });
    const session::NodeStatusTable& st = *m_analysis->status;
    m_key->setText(fromStd(node.key));
    const auto rows = m_model->rowCount();
    QString rowsText = tr("%n row(s)", nullptr, rows);
    // Without a translation (English) Qt only substitutes %n; choose the English form here.
    if (rowsText == QStringLiteral("%1 row(s)").arg(rows))
        rowsText = rows == 1 ? QStringLiteral("1 row") : QStringLiteral("%1 rows").arg(rows);
    m_facts->setText(tr("%1 · %2 · execution #%3 · %4 · %5")
                         .arg(kindText(node.name.kind), directionText(node.name.direction))
                         .arg(node.executionIndex)
                         .arg(rowsText, QString::fromStdString(sk.pair.label())));
    if (isSingleRun()) {
        // One side: "step0 · rank1", not the run against itself; its state in the run, not a verdict.
        const QString where = runPairLabel(sk.pair);
        m_facts->setText(tr("%1 · %2 · execution #%3 · %4 · %5")
                             .arg(kindText(node.name.kind), directionText(node.name.direction))
                             .arg(node.executionIndex)
                             .arg(rowsText, where));
        const std::optional<RunNodeState> state = m_runStateOf(m_node);
        const std::uint32_t below = m_runNanBelow ? m_runNanBelow(m_node) : 0;
        const Status cls = state ? runStateClass(*state) : Status::Pending;
        if (session::isFailing(cls))
            m_statusIcon->setPixmap(statuspalette::icon(cls).pixmap(20, 20));
        else
            m_statusIcon->clear();
        const QString label = state ? runStateLabel(*state) : statuspalette::label(Status::Pending);
        m_status->setText(node.childCount ? tr("%1 · %n node(s) below with NaN/Inf", nullptr, int(below)).arg(label) : label);
        return;
    }
    const Status own = m_node < st.own.size() ? st.own[m_node] : Status::NoData;
    const Status subtree = m_node < st.subtree.size() ? st.subtree[m_node] : own;
    const std::uint32_t below = m_node < st.failingBelow.size() ? st.failingBelow[m_node] : 0;
    m_statusIcon->setPixmap(statuspalette::icon(own).pixmap(20, 20));
    m_status->setText(tr("%1 · subtree worst: %2 · %3 failing below")
                          .arg(statuspalette::label(own), statuspalette::label(subtree))
                          .arg(below));
}

void DetailPanel::updateReasons()
{
    m_reasons.clear();
    if (isSingleRun()) {
        // No bench, no verdict: what the node's own statistics say.
        const std::optional<RunNodeState> state = m_runStateOf(m_node);
        m_reasonsLabel->setText(state ? runStateExplanation(*state) : QString());
        return;
    }
    const compare::CompareTable& table = *m_analysis->table;
    const int err = table.column("Err_message");
    const int accuracy = table.column("Accuracy Reached or Not");
    const int npuMd5 = table.column("NPU MD5");
    const int benchMd5 = table.column("BENCH MD5");
    const int cosineColumn = table.column("Cosine");
    const int maxAbsColumn = table.column("MaxAbsErr");
    bool inputsFail = false;
    bool outputsFail = false;
    bool agreeing = false; ///< a failing row whose figures say NPU and bench are equal
    for (int r = 0; r < m_model->rowCount(); ++r) {
        const Status s = m_model->rowStatus(r);
        if (!session::isFailing(s) && s != Status::Unmatched)
            continue;
        const std::size_t row = m_model->tableRow(r);
        const auto& cells = table.rows[row];
        const QString leaf = m_model->cellText(r, 0);
        auto textOf = [&](int c) {
            return c >= 0 && static_cast<std::size_t>(c) < cells.size() && cells[static_cast<std::size_t>(c)].isString()
                ? QString::fromStdString(cells[static_cast<std::size_t>(c)].asString())
                : QString();
        };
        QString why = textOf(err).trimmed();
        if (s == Status::Unmatched)
            why = tr("no bench counterpart");
        else if (why.isEmpty() && npuMd5 >= 0 && benchMd5 >= 0)
            why = tr("md5 differs (NPU %1, bench %2)").arg(textOf(npuMd5), textOf(benchMd5));
        else if (why.isEmpty() && textOf(accuracy) == QLatin1String("No"))
            why = tr("accuracy not reached");
        else if (why.isEmpty() && row < table.colors.size() && table.colors[row] != compare::RowColor::None)
            why = table.colors[row] == compare::RowColor::Red ? tr("highlighted red by msprobe's rules")
                                                               : tr("highlighted yellow by msprobe's rules");
        else if (why.isEmpty())
            why = statuspalette::label(s);
        // A leaf can have several rows saying the same (fc2.Linear's weight and its gradient): said once.
        const QString line = tr("%1: %2").arg(leaf, why);
        if (!m_reasons.contains(line))
            m_reasons << line;
        if (session::isFailing(s)) {
            (leaf.startsWith(QLatin1String("output")) ? outputsFail : inputsFail) = true;
            const auto number = [&](int c) -> std::optional<double> {
                if (c < 0 || static_cast<std::size_t>(c) >= cells.size())
                    return std::nullopt;
                const auto cell = cells[static_cast<std::size_t>(c)];
                if (cell.isNumber())
                    return cell.asDouble();
                bool ok = false;
                const double v = cell.isString() ? QString::fromStdString(cell.asString()).toDouble(&ok) : 0.0;
                return ok ? std::optional<double>(v) : std::nullopt;
            };
            const auto cosine = number(cosineColumn);
            const auto maxAbs = number(maxAbsColumn);
            agreeing = agreeing || (cosine && maxAbs && *cosine == 1.0 && *maxAbs == 0.0);
        }
    }
    const compare::FirstFailure& ff = m_analysis->firstFailure;
    if (!ff.key.empty() && ff.node.value == m_node) {
        m_reasons << (ff.found ? tr("First failing node in execution order: its outputs fail while its inputs pass.")
                               : tr("First node with failing rows; its inputs already differ, so the runs diverged "
                                    "before this dump."));
    } else if (inputsFail || outputsFail) {
        // Red rows that are not the first failure need their reason too, most of all above it (issue 28).
        const std::uint32_t here = m_analysis->skeleton->tree->node(tree::NodeId { m_node }).executionIndex;
        QString why;
        if (!ff.key.empty() && ff.found && here > ff.executionIndex)
            why = tr("Not the first failure: it runs after the first failing node %1 (#%2).")
                      .arg(QString::fromStdString(ff.key))
                      .arg(ff.executionIndex);
        else if (inputsFail && outputsFail)
            why = tr("Not counted as the first failure: its inputs fail too, so the difference came in before it.");
        else if (inputsFail)
            why = tr("Not counted as the first failure: only its inputs fail; its outputs match.");
        else
            why = tr("Not counted as the first failure: the first failing node is the earliest whose outputs fail "
                     "while its inputs pass.");
        if (agreeing)
            why += QLatin1Char(' ')
                + tr("Its failing rows have Cosine 1 and MaxAbsErr 0: NPU and bench agree there (for example −inf on "
                     "both sides), which msprobe's rules still mark.");
        m_reasons << why;
    }
    const std::uint32_t below = m_node < m_analysis->status->failingBelow.size() ? m_analysis->status->failingBelow[m_node] : 0;
    if (m_reasons.isEmpty())
        m_reasonsLabel->setText(below ? tr("No failing rows of its own; see the failing nodes below it.")
                                      : tr("No failing rows."));
    else
        m_reasonsLabel->setText(QStringLiteral("• ") + m_reasons.join(QStringLiteral("\n• ")));
}

QString DetailPanel::benchKey() const
{
    // The bench entry a node matched (fuzzy matching can pair different call numbers).
    const compare::CompareTable& table = *m_analysis->table;
    const int benchName = table.column("Bench Name");
    for (int r = 0; r < m_model->rowCount(); ++r) {
        const std::size_t row = m_model->tableRow(r);
        if (benchName >= 0 && table.matched[row] && table.rows[row][static_cast<std::size_t>(benchName)].isString())
            return QString::fromStdString(
                session::entryKeyOfRow(table.rows[row][static_cast<std::size_t>(benchName)].asString()));
    }
    return fromStd(m_analysis->skeleton->tree->node(tree::NodeId { m_node }).key);
}

void DetailPanel::updateStacks()
{
    const session::PairSkeleton& sk = *m_analysis->skeleton;
    const std::string key(sk.tree->node(tree::NodeId { m_node }).key);
    // analysePair reads stack.json after the compare; a skeleton loaded with its stack has it in the rank.
    auto show = [this](QPlainTextEdit* edit, const dump::RankDump* rank, const dump::StackMap* read,
                       const std::string& k, const QString& side) {
        const dump::StackMap* stack = read ? read : rank ? &rank->stack : nullptr;
        if (!stack || !stack->present) {
            QString text = tr("The %1 dump has no stack.json.").arg(side);
            for (const Diagnostic& d : m_analysis->stackDiagnostics) {
                if (rank && d.location.file.find(rank->location.dir.string()) == 0)
                    text = QString::fromStdString(d.format());
            }
            edit->setPlainText(text);
            return;
        }
        const auto* frames = stack->frames(k);
        edit->setPlainText(frames && !frames->empty() ? framesText(*frames)
                                                      : tr("stack.json has no frames for %1.").arg(QString::fromStdString(k)));
    };
    show(m_npuStack, sk.npu.get(), m_analysis->npuStack.get(), key, tr("NPU"));
    show(m_benchStack, sk.bench.get(), m_analysis->benchStack.get(), benchKey().toStdString(), tr("bench"));
}

void DetailPanel::updateDataFiles()
{
    QStringList lines;
    for (int r = 0; r < m_model->rowCount(); ++r) {
        const QString npu = m_model->npuDataPath(r);
        const QString bench = m_model->benchDataPath(r);
        if (npu.isEmpty() && bench.isEmpty())
            continue;
        lines << m_model->cellText(r, 0);
        lines << tr("  NPU:   %1").arg(npu.isEmpty() ? tr("(none)") : npu);
        if (!isSingleRun())
            lines << tr("  bench: %1").arg(bench.isEmpty() ? tr("(none)") : bench);
    }
    m_dataFiles->setPlainText(lines.isEmpty() ? tr("No data files (statistics or md5 dump).") : lines.join(QLatin1Char('\n')));
    m_tabs->setTabEnabled(m_tabs->indexOf(m_dataFiles), !lines.isEmpty());
}

QString DetailPanel::npuStackText() const
{
    return m_npuStack->toPlainText();
}

QString DetailPanel::benchStackText() const
{
    return m_benchStack->toPlainText();
}

QString DetailPanel::indexesToTsv(const QModelIndexList& indexes)
{
    if (indexes.isEmpty())
        return {};
    int top = indexes.front().row(), bottom = top, left = indexes.front().column(), right = left;
    std::map<std::pair<int, int>, QString> cells;
    for (const QModelIndex& i : indexes) {
        top = std::min(top, i.row());
        bottom = std::max(bottom, i.row());
        left = std::min(left, i.column());
        right = std::max(right, i.column());
        cells[{ i.row(), i.column() }] = sanitizeTsvCell(i.data(Qt::DisplayRole).toString());
    }
    QString out;
    for (int r = top; r <= bottom; ++r) {
        QStringList line;
        for (int c = left; c <= right; ++c) {
            auto it = cells.find({ r, c });
            line << (it == cells.end() ? QString() : it->second);
        }
        out += line.join(QLatin1Char('\t')) + QLatin1Char('\n');
    }
    return out;
}

QString DetailPanel::selectionTsv() const
{
    return m_view->selectionModel() ? indexesToTsv(m_view->selectionModel()->selectedIndexes()) : QString();
}

void DetailPanel::copySelection()
{
    const QString tsv = selectionTsv();
    if (!tsv.isEmpty())
        QApplication::clipboard()->setText(tsv);
}

QString DetailPanel::detailsText() const
{
    if (!m_analysis)
        return {};
    QString out;
    out += tr("Node: %1").arg(m_key->text()) + QLatin1Char('\n');
    out += m_facts->text() + QLatin1Char('\n');
    out += tr("Status: %1").arg(m_status->text()) + QLatin1Char('\n');
    out += tr("Reasons:") + QLatin1Char('\n');
    if (m_reasons.isEmpty())
        out += QStringLiteral("  ") + m_reasonsLabel->text() + QLatin1Char('\n');
    for (const QString& r : m_reasons)
        out += QStringLiteral("  - ") + r + QLatin1Char('\n');
    out += QLatin1Char('\n') + tr("Rows:") + QLatin1Char('\n');
    // One run: its side's fields alone, as the table shows them.
    const auto copied = [this](int c) { return !isSingleRun() || m_model->isNpuSideColumn(c); };
    QStringList header;
    for (int c = 0; c < m_model->columnCount(); ++c)
        if (copied(c))
            header << m_model->headerData(c, Qt::Horizontal).toString();
    out += header.join(QLatin1Char('\t')) + QLatin1Char('\n');
    for (int r = 0; r < m_model->rowCount(); ++r) {
        QStringList line;
        for (int c = 0; c < m_model->columnCount(); ++c)
            if (copied(c))
                line << sanitizeTsvCell(m_model->cellText(r, c));
        out += line.join(QLatin1Char('\t')) + QLatin1Char('\n');
    }
    out += QLatin1Char('\n') + tr("NPU stack:") + QLatin1Char('\n') + npuStackText() + QLatin1Char('\n');
    if (!isSingleRun())
        out += QLatin1Char('\n') + tr("Bench stack:") + QLatin1Char('\n') + benchStackText() + QLatin1Char('\n');
    const QString files = m_dataFiles->toPlainText();
    if (m_tabs->isTabEnabled(m_tabs->indexOf(m_dataFiles)))
        out += QLatin1Char('\n') + tr("Data files:") + QLatin1Char('\n') + files + QLatin1Char('\n');
    return out;
}

void DetailPanel::copyDetails()
{
    const QString text = detailsText();
    if (!text.isEmpty())
        QApplication::clipboard()->setText(text);
}

void DetailPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange)
        m_model->setDarkTheme(statuspalette::isDark(palette()));
    else if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

} // namespace probescope::ui
