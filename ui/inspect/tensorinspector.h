// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/inspect/tensorrow.h"
#include "core/session/session.h"
#include "core/tensor/elementdiff.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QCPItemText;
class QCPTextElement;
class QGridLayout;
class QLabel;
class QMouseEvent;
class QSpinBox;
class QStackedWidget;
class QTableWidget;
class QWidget;
template<typename T>
class QFutureWatcher;

namespace probescope::ui {

namespace inspect {
struct Loaded;
struct SliceRequest;
struct SliceResult;
} // namespace inspect

/**
 * @brief The values of one compare row's NPU and bench tensors, and where they differ.
 *
 * showRow() finds the row's two tensor files (tensorrow.h) and reads just those two, on the Qt thread
 * pool; the whole dump_tensor_data folder is never scanned. Once loaded it shows
 *  - a summary (max |Δ| and max relative error with their indices, elements over 1‰ and 5‰, cosine),
 *    next to the compare table's own Cosine/MaxAbsErr for the row, and the same figures for the slice shown;
 *  - a heatmap of a 2-D slice of NPU, bench, |NPU − bench| or the relative error (selectable), with
 *    pickers for the two axes and a slider per other axis; large slices are shown block-reduced
 *    (the largest magnitude of a difference block, the mean of a value block), NaN in green;
 *  - histograms: NPU and bench overlaid on a shared range, or log10 of the difference;
 *  - the k worst elements (by |Δ| or relative error) with their indices and values; choosing one
 *    moves the slice to it and marks it.
 * Statistics and md5 dumps have no tensors: a message says so. A file that cannot be read is named in
 * the message; whichever side did load is still shown. Loads and slices that are overtaken by a
 * newer request are dropped; the GUI thread never waits for them.
 */
class TensorInspector : public QWidget
{
    Q_OBJECT
public:
    enum class State : std::uint8_t {
        Empty,   ///< nothing requested
        Message, ///< the row has no tensors (statistics/md5 mode, a scalar, a bad row)
        Loading,
        Ready,   ///< at least one tensor is shown (messageText() may still name a file that failed)
        Error,   ///< no tensor could be read
    };

    static constexpr int kMaxWorst = 1000; ///< worst elements computed per load (the table shows topK())
    static constexpr int kHeatmapCells = 512; ///< heatmap resolution limit per axis

    explicit TensorInspector(QWidget* parent = nullptr);
    ~TensorInspector() override;

    /// The row's tensors (tensor mode), or a message why there are none.
    void showRow(std::shared_ptr<const session::PairAnalysis> analysis, std::size_t tableRow);
    /// Tensors named directly (e.g. from a dump without a compare).
    void showFiles(const TensorRowFiles& files);
    void clear();

    State state() const { return m_state; }
    /// What the empty tab says: how a tensor gets here.
    static QString emptyHint();
    /// The message shown above the plots: why there are no tensors, or which file failed and why.
    QString messageText() const;
    QString summaryText() const;

    void setView(tensor::ElementKind kind);
    tensor::ElementKind view() const { return m_view; }
    /// Rank worst elements by AbsDiff (default) or RelDiff.
    void setWorstBy(tensor::ElementKind by);
    void setTopK(int k);
    int topK() const { return m_topK; }
    /// Axes of the heatmap slice (-1 = none, for 0-d/1-d) and the indices of the other axes.
    void setSlice(const tensor::SliceSpec& spec);
    const tensor::SliceSpec& slice() const { return m_spec; }
    /// Moves the slice so that it contains the element at `index` and marks it.
    void showElement(const std::vector<std::int64_t>& index);

    /// Whole-tensor summary of the difference, when both sides loaded with one shape.
    std::optional<tensor::DiffSummary> summary() const;
    /// Summary of the slice shown.
    std::optional<tensor::DiffSummary> sliceSummary() const { return m_sliceSummary; }
    /// The worst elements listed in the table (topK() of them, worst first).
    std::vector<tensor::WorstElement> worstElements() const;
    const TensorRowFiles& files() const { return m_files; }

    QCustomPlot* heatmapPlot() const { return m_heatmap; }
    QCustomPlot* histogramPlot() const { return m_histogram; }
    QTableWidget* worstTable() const { return m_worstTable; }
    bool isSliceLoading() const { return m_sliceWatcher != nullptr; }

    bool saveHeatmapPng(const QString& path, int width = 0, int height = 0);
    bool saveHistogramPng(const QString& path, int width = 0, int height = 0);

signals:
    /// A tensor load ended (Ready or Error); the summary and the worst elements are up to date.
    void loaded();
    /// A heatmap slice was drawn.
    void sliceShown();

protected:
    void changeEvent(QEvent* event) override;

private:
    /// Every text again in the language in force: the controls, the table headers, the plots, the state message.
    void retranslate();
    /// The message of the state in force, made again (Empty and Loading; others come from the data or from core).
    void restateMessage();
    QLabel* staticLabel(const char* source, QWidget* parent);
    void setState(State state, const QString& message, bool isError);
    void startLoad();
    void onLoaded(std::shared_ptr<const inspect::Loaded> result);
    void rebuildAxisControls();
    void requestSlice();
    void startSlice();
    void onSliceDone(const inspect::SliceResult& result);
    void fillWorstTable();
    void fillHistogram();
    void updateSummary();
    void updateMarker();
    void onHeatmapMove(QMouseEvent* event);
    const std::vector<std::int64_t>* viewShape() const;
    bool diffAvailable() const;

    TensorRowFiles m_files;
    State m_state = State::Empty;
    QString m_message;
    tensor::ElementKind m_view = tensor::ElementKind::AbsDiff;
    tensor::ElementKind m_worstBy = tensor::ElementKind::AbsDiff;
    int m_topK = 20;
    tensor::SliceSpec m_spec;
    std::vector<std::int64_t> m_controlShape; ///< the shape the axis controls were built for
    std::optional<std::vector<std::int64_t>> m_marked;
    std::optional<tensor::DiffSummary> m_sliceSummary;
    std::shared_ptr<const inspect::Loaded> m_loaded;
    std::shared_ptr<const inspect::SliceResult> m_shownSlice;
    std::uint64_t m_generation = 0;
    QFutureWatcher<std::shared_ptr<const inspect::Loaded>>* m_loadWatcher = nullptr;
    QFutureWatcher<inspect::SliceResult>* m_sliceWatcher = nullptr;
    bool m_slicePending = false; ///< a newer slice was asked for while one was being computed

    QList<QLabel*> m_staticLabels; ///< Show, Rows, Columns, Worst, by: retranslated by their "source" property
    QLabel* m_header = nullptr;
    QLabel* m_messageLabel = nullptr;
    QStackedWidget* m_pages = nullptr;
    QLabel* m_placeholder = nullptr;
    QLabel* m_summaryLabel = nullptr;
    QComboBox* m_viewBox = nullptr;
    QComboBox* m_rowAxisBox = nullptr;
    QComboBox* m_colAxisBox = nullptr;
    QCheckBox* m_logColours = nullptr;
    QWidget* m_sliders = nullptr;
    QGridLayout* m_sliderLayout = nullptr;
    QComboBox* m_worstByBox = nullptr;
    QSpinBox* m_topKBox = nullptr;
    QCustomPlot* m_heatmap = nullptr;
    QCPTextElement* m_heatmapTitle = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    QCPItemRect* m_marker = nullptr;
    QLabel* m_pointer = nullptr;
    QCustomPlot* m_histogram = nullptr;
    QCPTextElement* m_histogramTitle = nullptr;
    QCPItemText* m_histogramNote = nullptr;
    QTableWidget* m_worstTable = nullptr;
};

} // namespace probescope::ui
