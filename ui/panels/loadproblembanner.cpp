// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/loadproblembanner.h"

#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>

#include <algorithm>

namespace probescope::ui {

LoadProblemBanner::LoadProblemBanner(QWidget* parent)
    : QFrame(parent)
{
    setObjectName("loadProblemBanner");
    // Amber on both themes: the text colour is fixed with the background so it stays readable in dark mode.
    setStyleSheet(QStringLiteral("#loadProblemBanner { background: #fff3cd; border: 1px solid #e0b84c; border-radius: 3px; }"
                                 "#loadProblemBanner QLabel { color: #4a3800; }"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 4, 4, 4);
    auto* icon = new QLabel(this);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(20, 20));
    m_text = new QLabel(this);
    m_text->setObjectName("loadProblemText");
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details = new QPushButton(this);
    m_details->setObjectName("showDiagnostics");
    m_close = new QToolButton(this);
    m_close->setAutoRaise(true);
    m_close->setText(QStringLiteral("✕"));
    layout->addWidget(icon, 0, Qt::AlignTop);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_details, 0, Qt::AlignTop);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    connect(m_details, &QPushButton::clicked, this, &LoadProblemBanner::detailsRequested);
    connect(m_close, &QToolButton::clicked, this, &QWidget::hide);
    refresh();
    hide();
}

void LoadProblemBanner::setDiagnostics(const Diagnostics& diagnostics)
{
    m_problems.clear();
    std::copy_if(diagnostics.begin(), diagnostics.end(), std::back_inserter(m_problems),
                 [](const Diagnostic& d) { return d.severity != Severity::Info; });
    // Errors first: a dump cut short matters more than a missing stack.json.
    std::stable_sort(m_problems.begin(), m_problems.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.severity > b.severity; });
    refresh();
    setVisible(!m_problems.empty());
}

void LoadProblemBanner::clear()
{
    m_problems.clear();
    refresh();
    hide();
}

QString LoadProblemBanner::text() const { return m_text->text(); }

void LoadProblemBanner::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        refresh();
    QFrame::changeEvent(event);
}

void LoadProblemBanner::refresh()
{
    m_details->setText(tr("Show diagnostics"));
    m_close->setToolTip(tr("Hide this message"));
    if (m_problems.empty()) {
        m_text->clear();
        return;
    }
    const Diagnostic& first = m_problems.front();
    const QString file = QFileInfo(QString::fromStdString(first.location.file)).fileName();
    QString text = tr("This pair was loaded with problems; what is shown may be incomplete. %1: %2")
                       .arg(file.isEmpty() ? QString::fromStdString(first.id) : file,
                            QString::fromStdString(first.message));
    if (m_problems.size() > 1)
        text += QLatin1Char(' ') + tr("(%1 problems in all)").arg(m_problems.size());
    m_text->setText(text);
    m_text->setToolTip(QString::fromStdString(first.format()));
}

} // namespace probescope::ui
