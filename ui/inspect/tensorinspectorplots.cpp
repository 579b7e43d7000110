// SPDX-License-Identifier: Apache-2.0
// The tensor inspector's plots of a loaded row (issue 38 split of tensorinspector.cpp): the histograms, the worst
// elements table, the summary line and the PNG exports. Loading and slicing stay in tensorinspector.cpp.
#include "ui/inspect/tensorinspector.h"

#include "ui/inspect/plotstyle.h"
#include "ui/inspect/tensorinspectordata.h"

#include <QLabel>
#include <QTableWidget>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace probescope::ui {

using tensor::ElementKind;
using inspect::viewName;

void TensorInspector::fillHistogram()
{
    m_histogram->clearGraphs();
    m_histogram->legend->setVisible(false);
    m_histogramNote->setText(QString());
    if (!m_loaded) {
        m_histogramTitle->setText(tr("Histogram"));
        m_histogram->replot();
        return;
    }
    auto addSteps = [this](const tensor::Histogram& h, const QString& name, const QColor& colour) {
        QCPGraph* g = m_histogram->addGraph();
        g->setName(name);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(colour, 1.5));
        g->setBrush(QColor(colour.red(), colour.green(), colour.blue(), 60));
        QVector<double> keys;
        QVector<double> values;
        for (std::size_t i = 0; i < h.counts.size(); ++i) {
            keys << h.binStart(i);
            values << static_cast<double>(h.counts[i]);
        }
        // Close the last step at hi.
        keys << h.hi;
        values << (h.counts.empty() ? 0.0 : static_cast<double>(h.counts.back()));
        g->setData(keys, values, true);
    };
    auto apart = [](const QString& side, const tensor::Histogram& h) {
        QStringList parts;
        if (h.nan)
            parts << tr("NaN %1").arg(h.nan);
        if (h.posInf)
            parts << tr("+inf %1").arg(h.posInf);
        if (h.negInf)
            parts << tr("\u2212inf %1").arg(h.negInf);
        if (h.nonPositive)
            parts << (h.nonPositive == h.total ? tr("all %1 equal (\u0394 = 0)").arg(h.total)
                                               : tr("equal (\u0394 = 0) %1").arg(h.nonPositive));
        return parts.isEmpty() ? QString()
                               : tr("%1: %2", "histogram: notes").arg(side, parts.join(QStringLiteral(" \u00b7 ")));
    };
    QStringList notes;
    double yHi = 1;
    if (inspect::isDiff(m_view)) {
        const bool rel = m_view == ElementKind::RelDiff;
        const auto& h = rel ? m_loaded->relHist : m_loaded->absHist;
        m_histogramTitle->setText(rel ? tr("log10 of the relative error") : tr("log10 |NPU \u2212 bench|"));
        m_histogram->xAxis->setLabel(rel ? tr("log10 relative error") : QString::fromUtf8("log10 |\u0394|"));
        if (h) {
            addSteps(*h, viewName(m_view), QColor(0xCC4C02));
            m_histogram->xAxis->setRange(h->lo, h->hi);
            for (auto c : h->counts)
                yHi = std::max(yHi, static_cast<double>(c));
            notes << apart(tr("elements"), *h);
        }
    } else {
        m_histogramTitle->setText(m_loaded->npuHist && m_loaded->benchHist ? tr("Values: NPU and bench")
                                  : m_loaded->npuHist                      ? tr("Values: NPU")
                                                                           : tr("Values: bench"));
        m_histogram->xAxis->setLabel(tr("value"));
        const std::optional<tensor::Histogram>* first = nullptr;
        for (const auto& [h, name, colour] :
             { std::tuple { &m_loaded->npuHist, tr("NPU"), plotstyle::seriesColor(0) },
               std::tuple { &m_loaded->benchHist, tr("bench"), plotstyle::seriesColor(1) } }) {
            if (!*h)
                continue;
            addSteps(**h, name, colour);
            first = first ? first : h;
            for (auto c : (*h)->counts)
                yHi = std::max(yHi, static_cast<double>(c));
            notes << apart(name, **h);
        }
        if (first)
            m_histogram->xAxis->setRange((*first)->lo, (*first)->hi);
        m_histogram->legend->setVisible(m_histogram->graphCount() > 0);
    }
    notes.removeAll(QString());
    m_histogramNote->setText(notes.join(QLatin1Char('\n')));
    m_histogram->yAxis->setRange(0, yHi * 1.08);
    m_histogram->replot();
}

void TensorInspector::fillWorstTable()
{
    const std::vector<tensor::WorstElement> worst = worstElements();
    const QSignalBlocker block(m_worstTable);
    m_worstTable->clearContents();
    m_worstTable->setRowCount(static_cast<int>(worst.size()));
    for (std::size_t i = 0; i < worst.size(); ++i) {
        const tensor::WorstElement& w = worst[i];
        const QStringList cells = { QString::number(i + 1),
                                    inspect::indexText(w.index),
                                    plotstyle::formatNumber(w.npu),
                                    plotstyle::formatNumber(w.bench),
                                    plotstyle::formatNumber(w.absDiff),
                                    plotstyle::formatNumber(w.relDiff) };
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c != 1)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_worstTable->setItem(static_cast<int>(i), c, item);
        }
    }
    m_worstTable->resizeColumnsToContents();
    m_worstTable->setEnabled(!worst.empty());
}

void TensorInspector::updateSummary()
{
    if (!m_loaded) {
        m_summaryLabel->clear();
        m_summaryLabel->setVisible(false);
        return;
    }
    QStringList lines;
    auto at = [this](std::int64_t flat) {
        const tensor::Tensor* t = m_loaded->tensorFor(ElementKind::AbsDiff);
        return t && flat >= 0 ? inspect::indexText(tensor::unravelIndex(t->shape, flat)) : QString();
    };
    auto describe = [&](const tensor::DiffSummary& s) {
        return tr("max |\u0394| %1 at %2 \u00b7 max relative %3 at %4 \u00b7 over 1\u2030: %5 of %6 \u00b7 over 5\u2030: %7 "
                  "\u00b7 cosine %8")
                   .arg(plotstyle::formatNumber(s.maxAbs), at(s.maxAbsIndex), plotstyle::formatNumber(s.maxRel),
                        at(s.maxRelIndex))
                   .arg(s.overOneThousandth)
                   .arg(s.count)
                   .arg(s.overFiveThousandths)
                   .arg(plotstyle::formatNumber(s.cosine))
            + (s.nonFinite ? tr(" \u00b7 %1 NaN/inf differences").arg(s.nonFinite) : QString());
    };
    if (m_loaded->summary)
        lines << tr("<b>Tensor</b>: %1").arg(describe(*m_loaded->summary));
    if (m_files.tableCosine || m_files.tableMaxAbsErr) {
        QStringList table;
        if (m_files.tableCosine)
            table << tr("Cosine %1").arg(plotstyle::formatNumber(*m_files.tableCosine));
        if (m_files.tableMaxAbsErr)
            table << tr("MaxAbsErr %1").arg(plotstyle::formatNumber(*m_files.tableMaxAbsErr));
        lines << tr("<b>Compare table</b>: %1").arg(table.join(QStringLiteral(" \u00b7 ")));
    }
    if (m_sliceSummary && m_shownSlice)
        lines << tr("<b>Slice %1</b>: %2")
                     .arg(inspect::sliceText(m_shownSlice->spec, m_controlShape.size()), describe(*m_sliceSummary));
    m_summaryLabel->setText(lines.join(QStringLiteral("<br>")));
    m_summaryLabel->setVisible(!lines.isEmpty());
}

bool TensorInspector::saveHeatmapPng(const QString& path, int width, int height)
{
    return m_heatmap->savePng(path, width, height);
}

bool TensorInspector::saveHistogramPng(const QString& path, int width, int height)
{
    return m_histogram->savePng(path, width, height);
}

} // namespace probescope::ui
