// SPDX-License-Identifier: Apache-2.0
#include "ui/inspect/tensorinspector.h"

#include "ui/inspect/plotstyle.h"
#include "ui/inspect/tensorinspectordata.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace probescope::ui {

using tensor::ElementKind;

namespace inspect {

namespace {

constexpr std::size_t kHistogramBins = 64;

void readSide(std::shared_ptr<const tensor::TensorResolver> tensors, const std::filesystem::path& dir,
              const std::string& dataName, Side& side)
{
    side.file = QString::fromStdString(dataName);
    // Through the resolver only (issue 33): a tensor folder that leaves its dump folder is refused, as in the compare.
    if (!tensors)
        tensors = tensor::makeTensorResolver(dir.parent_path(), dir);
    auto t = tensors->load(dataName);
    if (!t) {
        side.error = QObject::tr("Cannot read %1: %2 [%3]")
                         .arg(side.file, QString::fromStdString(t.error().message), QString::fromStdString(t.error().id));
        return;
    }
    // A tensor whose bytes disagree with its shape is refused here, so no view of it can fail later.
    if (auto view = tensor::ElementView::single(*t); !view) {
        side.error = QObject::tr("Cannot show %1: %2").arg(side.file, QString::fromStdString(view.error().message));
        return;
    }
    side.tensor = std::move(t).value();
}

std::shared_ptr<const Loaded> loadPair(const TensorRowFiles& files)
{
    auto loaded = std::make_shared<Loaded>();
    loaded->files = files;
    readSide(files.npuTensors, files.npuDir, files.npuDataName, loaded->npu);
    if (!files.benchDataName.empty())
        readSide(files.benchTensors, files.benchDir, files.benchDataName, loaded->bench);

    // NPU and bench share one histogram range and one colour scale, so equal values look equal.
    std::optional<tensor::ValueRange> range;
    for (const Side* side : { &loaded->npu, &loaded->bench }) {
        if (!side->tensor)
            continue;
        if (auto r = tensor::finiteRange(*tensor::ElementView::single(*side->tensor))) {
            if (!range)
                range = r;
            range->lo = std::min(range->lo, r->lo);
            range->hi = std::max(range->hi, r->hi);
        }
    }
    if (range)
        loaded->valueMagnitude = std::max({ std::fabs(range->lo), std::fabs(range->hi), 1e-300 });
    if (loaded->npu.tensor) {
        auto h = tensor::histogram(*tensor::ElementView::single(*loaded->npu.tensor), kHistogramBins, range);
        if (h)
            loaded->npuHist = std::move(h).value();
    }
    if (loaded->bench.tensor) {
        auto h = tensor::histogram(*tensor::ElementView::single(*loaded->bench.tensor), kHistogramBins, range);
        if (h)
            loaded->benchHist = std::move(h).value();
    }

    if (loaded->npu.tensor && loaded->bench.tensor) {
        const tensor::Tensor& n = *loaded->npu.tensor;
        const tensor::Tensor& b = *loaded->bench.tensor;
        auto summary = tensor::summarizeDifference(n, b);
        if (!summary) {
            loaded->note = QString::fromStdString(summary.error().message);
        } else {
            loaded->summary = *summary;
            if (auto w = tensor::worstElements(n, b, TensorInspector::kMaxWorst, ElementKind::AbsDiff))
                loaded->worstAbs = std::move(w).value();
            if (auto w = tensor::worstElements(n, b, TensorInspector::kMaxWorst, ElementKind::RelDiff))
                loaded->worstRel = std::move(w).value();
            if (auto h = tensor::histogramLog10(*tensor::ElementView::pair(n, b, ElementKind::AbsDiff), kHistogramBins))
                loaded->absHist = std::move(h).value();
            if (auto h = tensor::histogramLog10(*tensor::ElementView::pair(n, b, ElementKind::RelDiff), kHistogramBins))
                loaded->relHist = std::move(h).value();
        }
    }
    return loaded;
}


SliceResult computeSlice(const SliceRequest& request)
{
    SliceResult result;
    result.generation = request.generation;
    result.kind = request.kind;
    result.spec = request.spec;
    const Loaded& loaded = *request.loaded;
    const tensor::Tensor* npu = loaded.npu.tensor ? &*loaded.npu.tensor : nullptr;
    const tensor::Tensor* bench = loaded.bench.tensor ? &*loaded.bench.tensor : nullptr;
    Result<tensor::ElementView> view = makeError("ui.inspect", {}, "no tensor for this view");
    if (request.kind == ElementKind::Npu && npu)
        view = tensor::ElementView::single(*npu);
    else if (request.kind == ElementKind::Bench && bench)
        view = tensor::ElementView::single(*bench);
    else if (npu && bench)
        view = tensor::ElementView::pair(*npu, *bench, request.kind);
    if (!view) {
        result.error = QString::fromStdString(view.error().message);
        return result;
    }
    auto slice = tensor::extractSlice(*view, request.spec);
    if (!slice) {
        result.error = QString::fromStdString(slice.error().message);
        return result;
    }
    result.rows = slice->rows;
    result.cols = slice->cols;
    const std::int64_t limit = TensorInspector::kHeatmapCells;
    result.rowFactor = std::max<std::int64_t>(1, (slice->rows + limit - 1) / limit);
    result.colFactor = std::max<std::int64_t>(1, (slice->cols + limit - 1) / limit);
    // A difference block shows its worst element (a lone bad value must not be averaged away).
    result.shown = tensor::downsample(*slice, limit, limit,
                                      isDiff(request.kind) ? tensor::Pooling::MaxMagnitude : tensor::Pooling::Mean);
    for (double v : result.shown.values) {
        if (!std::isfinite(v))
            continue;
        result.maxFinite = std::max(result.maxFinite, std::fabs(v));
        if (v > 0 && (result.minPositive == 0 || v < result.minPositive))
            result.minPositive = v;
    }
    if (loaded.hasDiff()) {
        // A slice of every element (a 2-d tensor) has the tensor's summary: no second pass over it.
        if (slice->rows * slice->cols == view->numel())
            result.summary = loaded.summary;
        else if (auto s = tensor::summarizeDifference(*npu, *bench, request.spec))
            result.summary = *s;
    }
    return result;
}

QString shapeText(const std::vector<std::int64_t>& shape)
{
    QStringList parts;
    for (std::int64_t d : shape)
        parts << QString::number(d);
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QStringLiteral("]");
}


QCPColorGradient gradientFor(ElementKind kind)
{
    QCPColorGradient g;
    g.clearColorStops();
    if (isDiff(kind)) {
        // White for "no difference", darkening through orange to brown (ColorBrewer YlOrBr).
        g.setColorStopAt(0.0, QColor(0xFFFFFF));
        g.setColorStopAt(0.2, QColor(0xFFF7BC));
        g.setColorStopAt(0.45, QColor(0xFEC44F));
        g.setColorStopAt(0.7, QColor(0xEC7014));
        g.setColorStopAt(1.0, QColor(0x662506));
    } else {
        // Diverging around 0 (ColorBrewer RdBu): sign and size read at a glance.
        g.setColorStopAt(0.0, QColor(0x2166AC));
        g.setColorStopAt(0.25, QColor(0x92C5DE));
        g.setColorStopAt(0.5, QColor(0xF7F7F7));
        g.setColorStopAt(0.75, QColor(0xF4A582));
        g.setColorStopAt(1.0, QColor(0xB2182B));
    }
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(QColor(0x00B000));
    g.setLevelCount(256);
    return g;
}

} // namespace

bool isDiff(ElementKind kind)
{
    return kind == ElementKind::AbsDiff || kind == ElementKind::RelDiff;
}

/// numpy-style text of a slice: "[0, :, :]".
QString sliceText(const tensor::SliceSpec& spec, std::size_t rank)
{
    QStringList parts;
    for (std::size_t a = 0; a < rank; ++a) {
        const int axis = static_cast<int>(a);
        if (axis == spec.rowAxis || axis == spec.colAxis)
            parts << QStringLiteral(":");
        else
            parts << QString::number(a < spec.fixed.size() ? spec.fixed[a] : 0);
    }
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QStringLiteral("]");
}

QString indexText(const std::vector<std::int64_t>& index)
{
    return shapeText(index);
}

// The views' names on screen; core's tensor::elementKindName() gives the same texts in English only.
QString viewName(ElementKind kind)
{
    switch (kind) {
    case ElementKind::Npu:
        return TensorInspector::tr("NPU");
    case ElementKind::Bench:
        return TensorInspector::tr("bench");
    case ElementKind::AbsDiff:
        return TensorInspector::tr("|NPU \u2212 bench|");
    case ElementKind::RelDiff:
        return TensorInspector::tr("relative error");
    }
    return QStringLiteral("?");
}

} // namespace inspect

using inspect::viewName;

// -------------------------------------------------------------------------------------------------

TensorInspector::TensorInspector(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_header = new QLabel(this);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    m_messageLabel = new QLabel(this);
    m_messageLabel->setWordWrap(true);
    m_messageLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_messageLabel);
    m_summaryLabel = new QLabel(this);
    m_summaryLabel->setWordWrap(true);
    m_summaryLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summaryLabel);

    // Page 0: a placeholder saying why nothing is shown; page 1: the tensors.
    m_pages = new QStackedWidget(this);
    m_placeholder = new QLabel(m_pages);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setMargin(24);
    m_placeholder->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_pages->addWidget(m_placeholder);
    auto* content = new QWidget(m_pages);
    auto* contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(0, 0, 0, 0);
    m_pages->addWidget(content);
    layout->addWidget(m_pages, 1);

    auto* controls = new QHBoxLayout;
    controls->addWidget(staticLabel(QT_TR_NOOP("Show"), this));
    m_viewBox = new QComboBox(this);
    for (ElementKind k : { ElementKind::Npu, ElementKind::Bench, ElementKind::AbsDiff, ElementKind::RelDiff })
        m_viewBox->addItem(viewName(k), static_cast<int>(k));
    controls->addWidget(m_viewBox);
    controls->addSpacing(8);
    controls->addWidget(staticLabel(QT_TR_NOOP("Rows"), this));
    m_rowAxisBox = new QComboBox(this);
    m_rowAxisBox->setSizeAdjustPolicy(QComboBox::AdjustToContents); // items change with every tensor
    controls->addWidget(m_rowAxisBox);
    controls->addWidget(staticLabel(QT_TR_NOOP("Columns"), this));
    m_colAxisBox = new QComboBox(this);
    m_colAxisBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    controls->addWidget(m_colAxisBox);
    m_logColours = new QCheckBox(this);
    controls->addWidget(m_logColours);
    controls->addStretch(1);
    contentLayout->addLayout(controls);

    m_sliders = new QWidget(this);
    m_sliderLayout = new QGridLayout(m_sliders);
    m_sliderLayout->setContentsMargins(0, 0, 0, 0);
    contentLayout->addWidget(m_sliders);

    auto* split = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(split);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    m_heatmap = plotstyle::makePlot(left, QString(), &m_heatmapTitle);
    m_heatmap->setMinimumSize(180, 160); // small enough for the tabs beside the graph view on 1366 px
    m_heatmap->axisRect()->setupFullAxesBox(true);
    // Row 0 at the top, as a matrix is printed.
    m_heatmap->yAxis->setRangeReversed(true);
    m_heatmap->yAxis2->setRangeReversed(true);
    for (QCPAxis* axis : { m_heatmap->xAxis, m_heatmap->yAxis, m_heatmap->xAxis2, m_heatmap->yAxis2 }) {
        // Indices are whole numbers: ticks at 1, 2, 5, 10, … steps, never at 2.5.
        QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        axis->setTicker(ticker);
    }
    m_colorMap = new QCPColorMap(m_heatmap->xAxis, m_heatmap->yAxis);
    m_colorMap->setInterpolate(false);
    m_colorMap->setTightBoundary(false);
    m_colorScale = new QCPColorScale(m_heatmap);
    m_heatmap->plotLayout()->addElement(1, 1, m_colorScale);
    m_colorScale->setBarWidth(12);
    m_colorMap->setColorScale(m_colorScale);
    auto* margins = new QCPMarginGroup(m_heatmap);
    m_heatmap->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_marker = new QCPItemRect(m_heatmap);
    m_marker->setPen(QPen(QColor(0x00A0FF), 2));
    m_marker->setBrush(Qt::NoBrush);
    m_marker->setVisible(false);
    leftLayout->addWidget(m_heatmap, 1);
    m_pointer = new QLabel(left);
    m_pointer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    leftLayout->addWidget(m_pointer);

    auto* right = new QSplitter(Qt::Vertical, split);
    m_histogram = plotstyle::makePlot(right, QString(), &m_histogramTitle);
    m_histogram->setMinimumSize(160, 120);

    m_histogram->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignTop);
    m_histogramNote = new QCPItemText(m_histogram);
    m_histogramNote->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_histogramNote->position->setCoords(0.02, 0.03);
    m_histogramNote->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_histogramNote->setTextAlignment(Qt::AlignLeft);
    m_histogramNote->setColor(QColor(0x505050));
    auto* worstBox = new QWidget(right);
    auto* worstLayout = new QVBoxLayout(worstBox);
    worstLayout->setContentsMargins(0, 0, 0, 0);
    auto* worstBar = new QHBoxLayout;
    worstBar->addWidget(staticLabel(QT_TR_NOOP("Worst"), worstBox));
    m_topKBox = new QSpinBox(worstBox);
    m_topKBox->setRange(1, kMaxWorst);
    m_topKBox->setValue(m_topK);
    worstBar->addWidget(m_topKBox);
    worstBar->addWidget(staticLabel(QT_TR_NOOP("by"), worstBox));
    m_worstByBox = new QComboBox(worstBox);
    m_worstByBox->addItem(viewName(ElementKind::AbsDiff), static_cast<int>(ElementKind::AbsDiff));
    m_worstByBox->addItem(viewName(ElementKind::RelDiff), static_cast<int>(ElementKind::RelDiff));
    worstBar->addWidget(m_worstByBox);
    worstBar->addStretch(1);
    worstLayout->addLayout(worstBar);
    m_worstTable = new QTableWidget(worstBox);
    m_worstTable->setColumnCount(6);

    m_worstTable->verticalHeader()->setVisible(false);
    m_worstTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_worstTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_worstTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_worstTable->horizontalHeader()->setStretchLastSection(true);
    m_worstTable->verticalHeader()->setDefaultSectionSize(m_worstTable->fontMetrics().height() + 4);
    worstLayout->addWidget(m_worstTable, 1);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    contentLayout->addWidget(split, 1);

    connect(m_viewBox, &QComboBox::activated, this,
            [this](int index) { setView(static_cast<ElementKind>(m_viewBox->itemData(index).toInt())); });
    connect(m_rowAxisBox, &QComboBox::activated, this, [this](int) {
        tensor::SliceSpec spec = m_spec;
        const int row = m_rowAxisBox->currentData().toInt();
        if (row == spec.colAxis)
            spec.colAxis = spec.rowAxis; // picking the other picker's axis swaps them
        spec.rowAxis = row;
        setSlice(spec);
    });
    connect(m_colAxisBox, &QComboBox::activated, this, [this](int) {
        tensor::SliceSpec spec = m_spec;
        const int col = m_colAxisBox->currentData().toInt();
        if (col == spec.rowAxis)
            spec.rowAxis = spec.colAxis;
        spec.colAxis = col;
        setSlice(spec);
    });
    connect(m_logColours, &QCheckBox::toggled, this, [this] {
        if (m_shownSlice)
            onSliceDone(*m_shownSlice);
    });
    connect(m_topKBox, &QSpinBox::valueChanged, this, &TensorInspector::setTopK);
    connect(m_worstByBox, &QComboBox::activated, this,
            [this](int index) { setWorstBy(static_cast<ElementKind>(m_worstByBox->itemData(index).toInt())); });
    connect(m_worstTable, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto rows = m_worstTable->selectionModel()->selectedRows();
        const std::vector<tensor::WorstElement> worst = worstElements();
        if (!rows.isEmpty() && rows.front().row() < static_cast<int>(worst.size()))
            showElement(worst[static_cast<std::size_t>(rows.front().row())].index);
    });
    connect(m_heatmap, &QCustomPlot::mouseMove, this, &TensorInspector::onHeatmapMove);

    clear();
    retranslate();
}

QLabel* TensorInspector::staticLabel(const char* source, QWidget* parent)
{
    auto* label = new QLabel(parent);
    label->setProperty("source", QByteArray(source));
    m_staticLabels << label;
    return label;
}

void TensorInspector::retranslate()
{
    for (QLabel* label : m_staticLabels)
        label->setText(tr(label->property("source").toByteArray().constData()));
    for (QComboBox* box : { m_viewBox, m_worstByBox }) {
        for (int i = 0; i < box->count(); ++i)
            box->setItemText(i, viewName(static_cast<ElementKind>(box->itemData(i).toInt())));
    }
    m_logColours->setText(tr("Log colours"));
    m_logColours->setToolTip(tr("Colour differences on a log scale (they often span many decades)"));
    m_histogram->yAxis->setLabel(tr("elements"));
    m_worstTable->setHorizontalHeaderLabels(
        { tr("#"), tr("index"), tr("NPU"), tr("bench"), QString::fromUtf8("|\u0394|"), tr("relative") });
    restateMessage();
    // The plots, the worst elements, the summary and the dimension names are made from the data in force.
    rebuildAxisControls();
    fillHistogram();
    fillWorstTable();
    updateSummary();
    if (m_shownSlice)
        onSliceDone(*m_shownSlice);
    else
        m_heatmapTitle->setText(tr("Slice"));
    m_heatmap->replot();
}

void TensorInspector::restateMessage()
{
    if (m_state == State::Empty) {
        setState(State::Empty, emptyHint(), false);
    } else if (m_state == State::Loading) {
        const QString npuFile = QString::fromStdString(m_files.npuDataName);
        setState(State::Loading,
                 m_files.benchDataName.empty() ? tr("Reading %1\u2026").arg(npuFile)
                                               : tr("Reading %1 and its bench tensor\u2026").arg(npuFile),
                 false);
    }
}

QString TensorInspector::emptyHint()
{
    return tr("Select a node in the tree: its first failing tensor is shown here. Or double-click a column in "
              "Details to open that tensor.");
}

void TensorInspector::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange && m_heatmap)
        retranslate();
    QWidget::changeEvent(event);
}

TensorInspector::~TensorInspector() = default; // workers hold shared copies of their inputs; nothing to wait for

void TensorInspector::clear()
{
    ++m_generation;
    m_files = {};
    m_loaded.reset();
    m_shownSlice.reset();
    m_sliceSummary.reset();
    m_marked.reset();
    m_controlShape.clear();
    m_spec = {};
    if (m_loadWatcher) {
        m_loadWatcher->disconnect(this);
        m_loadWatcher->deleteLater();
        m_loadWatcher = nullptr;
    }
    m_header->clear();
    setState(State::Empty, emptyHint(), false);
    rebuildAxisControls();
    fillHistogram();
    fillWorstTable();
    updateSummary();
    m_colorMap->data()->clear();
    m_colorMap->setVisible(false);
    m_colorScale->setVisible(false);
    m_marker->setVisible(false);
    m_pointer->clear();
    m_heatmapTitle->setText(tr("Slice"));
    m_heatmap->replot();
}

void TensorInspector::setState(State state, const QString& message, bool isError)
{
    m_state = state;
    m_message = message;
    const QString colour = isError ? QStringLiteral("color: #B0200F;") : QString();
    // With tensors shown, the message is a note above them; without, it takes the place of the plots.
    const bool content = state == State::Ready;
    m_pages->setCurrentIndex(content ? 1 : 0);
    m_messageLabel->setText(content ? message : QString());
    m_messageLabel->setVisible(content && !message.isEmpty());
    m_messageLabel->setStyleSheet(colour);
    m_placeholder->setText(content ? QString() : message);
    m_placeholder->setStyleSheet(colour.isEmpty() ? QStringLiteral("color: #606060;") : colour);
}

QString TensorInspector::messageText() const
{
    return m_message;
}

QString TensorInspector::summaryText() const
{
    return m_summaryLabel->text();
}

void TensorInspector::showRow(std::shared_ptr<const session::PairAnalysis> analysis, std::size_t tableRow)
{
    if (!analysis) {
        clear();
        return;
    }
    TensorRowFiles files = resolveTensorRow(*analysis, tableRow);
    if (files.kind == TensorRowFiles::Kind::Tensors) {
        showFiles(files);
        return;
    }
    clear();
    m_files = std::move(files);
    m_header->setText(m_files.npuName.empty() ? QString() : QString::fromStdString(m_files.npuName));
    // core's reason in English; the two a user meets on every statistics or md5 pair in the language in force.
    QString message = QString::fromStdString(m_files.message);
    if (m_files.kind == TensorRowFiles::Kind::NotTensorMode)
        message = m_files.message.rfind("md5", 0) == 0
            ? tr("md5-mode dump: no tensors. These dumps were written with task \"statistics\" and summary_mode md5, so "
                 "only checksums and statistics were saved; dump with task \"tensor\" to inspect values.")
            : tr("Statistics-mode dump: no tensors. These dumps were written with task \"statistics\", so only the four "
                 "statistics of each tensor were saved; dump with task \"tensor\" to inspect values.");
    else if (m_files.kind == TensorRowFiles::Kind::NoTensor && m_files.benchNote.empty()
             && m_files.message.find("is not a tensor") != std::string::npos)
        message = tr("\"%1\" is not a tensor (a scalar, a None argument or a leaf without data_name): there is no file "
                     "to inspect.")
                      .arg(QString::fromStdString(m_files.npuName));
    setState(State::Message, message, false);
}

void TensorInspector::showFiles(const TensorRowFiles& files)
{
    clear();
    m_files = files;
    const QString npuFile = QString::fromStdString(files.npuDataName);
    const QString benchFile = QString::fromStdString(files.benchDataName);
    m_header->setText(QString::fromStdString(files.npuName));
    setState(State::Loading,
             benchFile.isEmpty() ? tr("Reading %1\u2026").arg(npuFile) : tr("Reading %1 and its bench tensor\u2026").arg(npuFile),
             false);
    startLoad();
}

void TensorInspector::startLoad()
{
    using Future = std::shared_ptr<const inspect::Loaded>;
    m_loadWatcher = new QFutureWatcher<Future>(this);
    auto* watcher = m_loadWatcher;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        if (watcher != m_loadWatcher)
            return;
        m_loadWatcher = nullptr;
        watcher->deleteLater();
        onLoaded(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([files = m_files] { return inspect::loadPair(files); }));
}

bool TensorInspector::diffAvailable() const
{
    return m_loaded && m_loaded->hasDiff();
}

void TensorInspector::onLoaded(std::shared_ptr<const inspect::Loaded> result)
{
    m_loaded = std::move(result);
    const inspect::Loaded& l = *m_loaded;
    QStringList notes;
    for (const QString& e : { l.npu.error, l.bench.error })
        if (!e.isEmpty())
            notes << e;
    if (!m_files.benchNote.empty())
        notes << QString::fromStdString(m_files.benchNote);
    if (!l.note.isEmpty())
        notes << l.note;
    const bool any = l.npu.tensor || l.bench.tensor;
    setState(any ? State::Ready : State::Error, notes.join(QLatin1Char('\n')), !l.npu.error.isEmpty() || !l.bench.error.isEmpty());

    auto describe = [](const QString& side, const inspect::Side& s) {
        if (!s.tensor)
            return QString();
        return QStringLiteral("<b>%1</b> %2 \u00b7 %3 \u00b7 %4")
            .arg(side.toHtmlEscaped(), s.file.toHtmlEscaped(), QString::fromLatin1(tensor::torchName(s.tensor->dtype)),
                inspect::shapeText(s.tensor->shape));
    };
    QStringList header;
    header << QStringLiteral("<b>%1</b>").arg(QString::fromStdString(m_files.npuName).toHtmlEscaped());
    for (const QString& line :
        { describe(viewName(ElementKind::Npu), l.npu), describe(viewName(ElementKind::Bench), l.bench) })
        if (!line.isEmpty())
            header << line;
    m_header->setText(header.join(QStringLiteral("<br>")));

    // Enable the views that exist; start on |Δ| when there is one, as finding it is the point.
    auto* model = qobject_cast<QStandardItemModel*>(m_viewBox->model());
    for (int i = 0; i < m_viewBox->count(); ++i) {
        const auto kind = static_cast<ElementKind>(m_viewBox->itemData(i).toInt());
        if (model && model->item(i))
            model->item(i)->setEnabled(l.tensorFor(kind) != nullptr);
    }
    m_view = diffAvailable() ? ElementKind::AbsDiff : (l.npu.tensor ? ElementKind::Npu : ElementKind::Bench);
    m_viewBox->setCurrentIndex(m_viewBox->findData(static_cast<int>(m_view)));
    m_logColours->setChecked(false);
    m_logColours->setEnabled(inspect::isDiff(m_view));

    m_controlShape.clear();
    rebuildAxisControls();
    // Start on the slice through the worst element, marked.
    const std::vector<tensor::WorstElement> worst = worstElements();
    if (!worst.empty() && worst.front().index.size() == m_spec.fixed.size()) {
        m_marked = worst.front().index;
        m_spec.fixed = worst.front().index;
        rebuildAxisControls();
    }
    fillHistogram();
    fillWorstTable();
    updateSummary();
    requestSlice();
    emit loaded();
}

const std::vector<std::int64_t>* TensorInspector::viewShape() const
{
    if (!m_loaded)
        return nullptr;
    const tensor::Tensor* t = m_loaded->tensorFor(m_view);
    return t ? &t->shape : nullptr;
}

void TensorInspector::rebuildAxisControls()
{
    const std::vector<std::int64_t>* shape = viewShape();
    const std::vector<std::int64_t> current = shape ? *shape : std::vector<std::int64_t> {};
    const bool shapeChanged = current != m_controlShape || m_spec.fixed.size() != current.size();
    if (shapeChanged) {
        m_controlShape = current;
        m_spec = tensor::defaultSlice(current);
    }
    const int rank = static_cast<int>(current.size());
    {
        const QSignalBlocker a(m_rowAxisBox);
        const QSignalBlocker b(m_colAxisBox);
        m_rowAxisBox->clear();
        m_colAxisBox->clear();
        if (rank < 2)
            m_rowAxisBox->addItem(QStringLiteral("\u2014"), -1);
        if (rank < 1)
            m_colAxisBox->addItem(QStringLiteral("\u2014"), -1);
        for (int i = 0; i < rank && rank >= 1; ++i) {
            const QString text = tr("dim %1 (%2)").arg(i).arg(current[static_cast<std::size_t>(i)]);
            if (rank >= 2)
                m_rowAxisBox->addItem(text, i);
            m_colAxisBox->addItem(text, i);
        }
        m_rowAxisBox->setCurrentIndex(std::max(0, m_rowAxisBox->findData(m_spec.rowAxis)));
        m_colAxisBox->setCurrentIndex(std::max(0, m_colAxisBox->findData(m_spec.colAxis)));
        m_rowAxisBox->setEnabled(rank >= 2);
        m_colAxisBox->setEnabled(rank >= 2);
    }

    // One slider per axis that is not shown.
    while (QLayoutItem* item = m_sliderLayout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    int row = 0;
    for (int axis = 0; axis < rank; ++axis) {
        if (axis == m_spec.rowAxis || axis == m_spec.colAxis)
            continue;
        const std::int64_t size = current[static_cast<std::size_t>(axis)];
        auto* name = new QLabel(tr("dim %1").arg(axis), m_sliders);
        auto* slider = new QSlider(Qt::Horizontal, m_sliders);
        // A dimension beyond int range cannot be a slider; so large a tensor would not be in memory anyway.
        slider->setRange(0, static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(size - 1, 0), INT32_MAX)));
        slider->setValue(static_cast<int>(m_spec.fixed[static_cast<std::size_t>(axis)]));
        auto* value = new QLabel(m_sliders);
        value->setMinimumWidth(value->fontMetrics().horizontalAdvance(QStringLiteral("00000 / 00000")));
        value->setText(QStringLiteral("%1 / %2").arg(slider->value()).arg(size - 1));
        m_sliderLayout->addWidget(name, row, 0);
        m_sliderLayout->addWidget(slider, row, 1);
        m_sliderLayout->addWidget(value, row, 2);
        connect(slider, &QSlider::valueChanged, this, [this, axis, value, size](int v) {
            value->setText(QStringLiteral("%1 / %2").arg(v).arg(size - 1));
            if (static_cast<std::size_t>(axis) < m_spec.fixed.size() && m_spec.fixed[static_cast<std::size_t>(axis)] != v) {
                m_spec.fixed[static_cast<std::size_t>(axis)] = v;
                requestSlice();
            }
        });
        ++row;
    }
    m_sliders->setVisible(row > 0);
}

void TensorInspector::setView(ElementKind kind)
{
    if (m_loaded && !m_loaded->tensorFor(kind))
        return; // the combo disables such entries; programmatic calls are ignored the same way
    m_view = kind;
    {
        const QSignalBlocker block(m_viewBox);
        m_viewBox->setCurrentIndex(m_viewBox->findData(static_cast<int>(kind)));
    }
    {
        const QSignalBlocker block(m_logColours);
        m_logColours->setEnabled(inspect::isDiff(kind));
        m_logColours->setChecked(kind == ElementKind::RelDiff);
    }
    const auto before = m_controlShape;
    const auto* shape = viewShape();
    if (!shape || *shape != before)
        rebuildAxisControls();
    fillHistogram();
    requestSlice();
}

void TensorInspector::setWorstBy(ElementKind by)
{
    if (by != ElementKind::AbsDiff && by != ElementKind::RelDiff)
        return;
    m_worstBy = by;
    m_worstByBox->setCurrentIndex(m_worstByBox->findData(static_cast<int>(by)));
    fillWorstTable();
}

void TensorInspector::setTopK(int k)
{
    m_topK = std::clamp(k, 1, kMaxWorst);
    if (m_topKBox->value() != m_topK) {
        const QSignalBlocker block(m_topKBox);
        m_topKBox->setValue(m_topK);
    }
    fillWorstTable();
}

void TensorInspector::setSlice(const tensor::SliceSpec& spec)
{
    const std::size_t rank = m_controlShape.size();
    tensor::SliceSpec s = spec;
    if (s.fixed.size() != rank)
        s.fixed.assign(rank, 0);
    m_spec = s;
    rebuildAxisControls();
    requestSlice();
}

void TensorInspector::showElement(const std::vector<std::int64_t>& index)
{
    if (index.size() != m_controlShape.size())
        return;
    m_marked = index;
    bool moved = false;
    for (std::size_t a = 0; a < index.size(); ++a) {
        const int axis = static_cast<int>(a);
        if (axis != m_spec.rowAxis && axis != m_spec.colAxis && m_spec.fixed[a] != index[a]) {
            m_spec.fixed[a] = index[a];
            moved = true;
        }
    }
    if (moved) {
        rebuildAxisControls(); // the sliders follow the new indices
        requestSlice();
    } else {
        updateMarker();
        m_heatmap->replot();
    }
}

std::optional<tensor::DiffSummary> TensorInspector::summary() const
{
    if (!m_loaded)
        return std::nullopt;
    return m_loaded->summary;
}

std::vector<tensor::WorstElement> TensorInspector::worstElements() const
{
    if (!m_loaded)
        return {};
    const bool rel = m_worstBy == ElementKind::RelDiff;
    const auto& all = rel ? m_loaded->worstRel : m_loaded->worstAbs;
    // Elements that do not differ are not "worst": equal tensors list nothing (NaN differences do count).
    std::vector<tensor::WorstElement> out;
    for (const tensor::WorstElement& w : all) {
        if (out.size() >= static_cast<std::size_t>(m_topK) || (rel ? w.relDiff : w.absDiff) == 0)
            break;
        out.push_back(w);
    }
    return out;
}

// -------------------------------------------------------------------------------------------------

void TensorInspector::requestSlice()
{
    if (!m_loaded || !m_loaded->tensorFor(m_view))
        return;
    if (m_sliceWatcher) {
        // Latest wins: one slice at a time, and only the newest request runs next.
        m_slicePending = true;
        return;
    }
    startSlice();
}

void TensorInspector::startSlice()
{
    m_slicePending = false;
    inspect::SliceRequest request { m_loaded, m_view, m_spec, m_generation };
    m_sliceWatcher = new QFutureWatcher<inspect::SliceResult>(this);
    auto* watcher = m_sliceWatcher;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        m_sliceWatcher = nullptr;
        watcher->deleteLater();
        if (m_slicePending) {
            if (m_loaded && m_loaded->tensorFor(m_view))
                startSlice();
            else
                m_slicePending = false;
            return;
        }
        const inspect::SliceResult result = watcher->result();
        if (result.generation == m_generation)
            onSliceDone(result);
    });
    watcher->setFuture(QtConcurrent::run([request] { return inspect::computeSlice(request); }));
}

void TensorInspector::onSliceDone(const inspect::SliceResult& result)
{
    // `result` may be *m_shownSlice itself (a redraw): kept alive until the end, not freed by the assignment.
    const auto previous = m_shownSlice;
    m_shownSlice = std::make_shared<const inspect::SliceResult>(result);
    m_sliceSummary = result.summary;
    const tensor::Slice2D& s = result.shown;
    const std::size_t rank = m_controlShape.size();
    const QString kindText = viewName(result.kind);
    if (!result.error.isEmpty() || s.values.empty()) {
        m_colorMap->data()->clear();
        m_colorMap->setVisible(false);
        m_colorScale->setVisible(false);
        m_heatmapTitle->setText(result.error.isEmpty() ? tr("%1: empty tensor").arg(kindText) : result.error);
        m_heatmap->replot();
        updateSummary();
        emit sliceShown();
        return;
    }
    const bool diff = inspect::isDiff(result.kind);
    const bool logScale = diff && m_logColours->isChecked() && result.minPositive > 0;
    QCPRange range;
    if (diff) {
        const double hi = result.maxFinite > 0 ? result.maxFinite : 1.0;
        range = logScale ? QCPRange(std::max(result.minPositive, hi * 1e-8), hi) : QCPRange(0, hi);
        if (logScale && range.lower >= range.upper)
            range.lower = range.upper / 10;
    } else {
        const double m = m_loaded ? m_loaded->valueMagnitude : std::max(result.maxFinite, 1e-300);
        range = QCPRange(-m, m);
    }
    // QCustomPlot maps data to colours through an int index: infinities and (on a log scale) values <= 0
    // are clamped to the range ends first so no out-of-range conversion happens.
    auto clampValue = [&](double v) {
        if (std::isnan(v))
            return v;
        return std::clamp(v, range.lower, range.upper);
    };
    // A dimension of one cell would have no width in QCPColorMap (cells are centred on the range ends):
    // it is drawn as two equal cells half a unit apart instead.
    const std::int64_t outCols = s.cols;
    const std::int64_t outRows = s.rows;
    const int keySize = static_cast<int>(outCols == 1 ? 2 : outCols);
    const int valueSize = static_cast<int>(outRows == 1 ? 2 : outRows);
    const double fc = static_cast<double>(result.colFactor);
    const double fr = static_cast<double>(result.rowFactor);
    const double c0 = (fc - 1) / 2;
    const double r0 = (fr - 1) / 2;
    const QCPRange keyRange = outCols == 1 ? QCPRange(-0.25, 0.25) : QCPRange(c0, c0 + static_cast<double>(outCols - 1) * fc);
    const QCPRange valueRange = outRows == 1 ? QCPRange(-0.25, 0.25) : QCPRange(r0, r0 + static_cast<double>(outRows - 1) * fr);
    m_colorMap->data()->setSize(keySize, valueSize);
    m_colorMap->data()->setRange(keyRange, valueRange);
    for (int c = 0; c < keySize; ++c) {
        const std::int64_t sc = outCols == 1 ? 0 : c;
        for (int r = 0; r < valueSize; ++r) {
            const std::int64_t sr = outRows == 1 ? 0 : r;
            m_colorMap->data()->setCell(c, r, clampValue(s.at(sr, sc)));
        }
    }
    m_colorMap->setGradient(inspect::gradientFor(result.kind));
    m_colorScale->setDataScaleType(logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (logScale)
        m_colorScale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
        m_colorScale->axis()->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    m_colorMap->setDataScaleType(logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_colorMap->setDataRange(range);
    m_colorScale->setDataRange(range);
    m_colorMap->setVisible(true);
    m_colorScale->setVisible(true);
    m_colorScale->axis()->setLabel(diff ? kindText : tr("value"));

    m_heatmap->xAxis->setRange(-0.5, static_cast<double>(result.cols) - 0.5);
    m_heatmap->yAxis->setRange(-0.5, static_cast<double>(result.rows) - 0.5);
    m_heatmap->xAxis->setLabel(result.spec.colAxis >= 0 ? tr("dim %1").arg(result.spec.colAxis) : QString());
    m_heatmap->yAxis->setLabel(result.spec.rowAxis >= 0 ? tr("dim %1").arg(result.spec.rowAxis) : QString());
    QString title = tr("%1 %2").arg(kindText, rank > 0 ? inspect::sliceText(result.spec, rank) : tr("(0-d)"));
    if (result.rowFactor > 1 || result.colFactor > 1)
        title += tr("  \u00b7 %1\u00d7%2 blocks (%3)")
                     .arg(result.rowFactor)
                     .arg(result.colFactor)
                     .arg(diff ? tr("largest") : tr("mean"));
    m_heatmapTitle->setText(title);
    updateMarker();
    m_heatmap->replot();
    updateSummary();
    emit sliceShown();
}

void TensorInspector::updateMarker()
{
    m_marker->setVisible(false);
    if (!m_marked || m_marked->size() != m_controlShape.size() || !m_shownSlice)
        return;
    const std::vector<std::int64_t>& idx = *m_marked;
    for (std::size_t a = 0; a < idx.size(); ++a) {
        const int axis = static_cast<int>(a);
        if (axis != m_spec.rowAxis && axis != m_spec.colAxis && idx[a] != m_spec.fixed[a])
            return; // not in the slice shown
    }
    const double c = m_spec.colAxis >= 0 ? static_cast<double>(idx[static_cast<std::size_t>(m_spec.colAxis)]) : 0.0;
    const double r = m_spec.rowAxis >= 0 ? static_cast<double>(idx[static_cast<std::size_t>(m_spec.rowAxis)]) : 0.0;
    m_marker->topLeft->setCoords(c - 0.5, r - 0.5);
    m_marker->bottomRight->setCoords(c + 0.5, r + 0.5);
    m_marker->setVisible(true);
}

void TensorInspector::onHeatmapMove(QMouseEvent* event)
{
    if (!m_loaded || !m_shownSlice || !m_shownSlice->error.isEmpty()) {
        m_pointer->clear();
        return;
    }
    const auto c = static_cast<std::int64_t>(std::llround(m_heatmap->xAxis->pixelToCoord(event->pos().x())));
    const auto r = static_cast<std::int64_t>(std::llround(m_heatmap->yAxis->pixelToCoord(event->pos().y())));
    if (c < 0 || r < 0 || c >= m_shownSlice->cols || r >= m_shownSlice->rows) {
        m_pointer->clear();
        return;
    }
    std::vector<std::int64_t> index = m_spec.fixed;
    if (m_spec.rowAxis >= 0)
        index[static_cast<std::size_t>(m_spec.rowAxis)] = r;
    if (m_spec.colAxis >= 0)
        index[static_cast<std::size_t>(m_spec.colAxis)] = c;
    QStringList parts;
    parts << inspect::indexText(index);
    const tensor::Tensor* npu = m_loaded->npu.tensor ? &*m_loaded->npu.tensor : nullptr;
    const tensor::Tensor* bench = m_loaded->bench.tensor ? &*m_loaded->bench.tensor : nullptr;
    std::optional<double> n;
    std::optional<double> b;
    if (npu && index.size() == npu->shape.size())
        if (auto flat = tensor::ravelIndex(npu->shape, index))
            n = npu->valueAt(*flat);
    if (bench && index.size() == bench->shape.size())
        if (auto flat = tensor::ravelIndex(bench->shape, index))
            b = bench->valueAt(*flat);
    if (n)
        parts << tr("NPU %1").arg(plotstyle::formatNumber(*n));
    if (b)
        parts << tr("bench %1").arg(plotstyle::formatNumber(*b));
    if (n && b && diffAvailable()) {
        parts << QString::fromUtf8("|\u0394| %1").arg(plotstyle::formatNumber(tensor::absoluteDifference(*n, *b)));
        parts << tr("relative %1").arg(plotstyle::formatNumber(tensor::relativeDifference(*n, *b)));
    }
    m_pointer->setText(parts.join(QStringLiteral("   ")));
}

} // namespace probescope::ui
