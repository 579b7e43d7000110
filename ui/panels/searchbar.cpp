// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/searchbar.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QStyle>
#include <QToolButton>

namespace probescope::ui {

namespace {

QToolButton* makeToggle(const QString& text, const QString& toolTip, QWidget* parent)
{
    auto* b = new QToolButton(parent);
    b->setText(text);
    b->setToolTip(toolTip);
    b->setCheckable(true);
    b->setAutoRaise(true);
    b->setFocusPolicy(Qt::TabFocus);
    return b;
}

} // namespace

SearchBar::SearchBar(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);

    m_edit = new QLineEdit(this);
    m_edit->setClearButtonEnabled(true);
    m_edit->installEventFilter(this);
    layout->addWidget(m_edit, 1);

    m_regex = makeToggle(QStringLiteral(".*"), QString(), this);
    m_case = makeToggle(QStringLiteral("Aa"), QString(), this);
    layout->addWidget(m_regex);
    layout->addWidget(m_case);

    m_counter = new QLabel(this);
    m_counter->setMinimumWidth(m_counter->fontMetrics().horizontalAdvance(QStringLiteral("00000 / 00000")));
    m_counter->setAlignment(Qt::AlignCenter);
    layout->addWidget(m_counter);

    m_previous = new QToolButton(this);
    m_previous->setArrowType(Qt::UpArrow);
    m_previous->setAutoRaise(true);

    m_next = new QToolButton(this);
    m_next->setArrowType(Qt::DownArrow);
    m_next->setAutoRaise(true);

    layout->addWidget(m_previous);
    layout->addWidget(m_next);

    retranslate();
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(150);
    connect(&m_debounce, &QTimer::timeout, this, &SearchBar::emitSearch);
    connect(m_edit, &QLineEdit::textEdited, this, &SearchBar::schedule);
    // A toggle changes the meaning of what is already typed: search again at once.
    connect(m_regex, &QToolButton::toggled, this, [this] {
        validate();
        emitSearch();
    });
    connect(m_case, &QToolButton::toggled, this, &SearchBar::emitSearch);
    connect(m_previous, &QToolButton::clicked, this, [this] {
        flush();
        emit previousRequested();
    });
    connect(m_next, &QToolButton::clicked, this, [this] {
        flush();
        emit nextRequested();
    });
    updateCounter();
}

QString SearchBar::pattern() const
{
    return m_edit->text();
}

bool SearchBar::isRegex() const
{
    return m_regex->isChecked();
}

bool SearchBar::isCaseSensitive() const
{
    return m_case->isChecked();
}

void SearchBar::setPattern(const QString& pattern)
{
    if (pattern == m_edit->text())
        return;
    m_edit->setText(pattern);
    schedule();
}

void SearchBar::setRegex(bool on)
{
    m_regex->setChecked(on);
}

void SearchBar::setCaseSensitive(bool on)
{
    m_case->setChecked(on);
}

void SearchBar::setHits(int current, int total)
{
    m_current = current;
    m_total = total;
    updateCounter();
}

void SearchBar::focusSearch()
{
    m_edit->setFocus(Qt::ShortcutFocusReason);
    m_edit->selectAll();
}

void SearchBar::flush()
{
    if (m_debounce.isActive())
        emitSearch();
}

void SearchBar::schedule()
{
    validate();
    m_debounce.start();
}

void SearchBar::emitSearch()
{
    m_debounce.stop();
    validate();
    if (!isPatternValid())
        return;
    emit searchRequested(pattern(), isRegex(), isCaseSensitive());
}

void SearchBar::validate()
{
    QString error;
    if (isRegex() && !pattern().isEmpty()) {
        const QRegularExpression re(pattern());
        if (!re.isValid())
            error = tr("Invalid regex: %1 (at %2)").arg(re.errorString()).arg(re.patternErrorOffset());
    }
    if (error == m_errorText)
        return;
    m_errorText = error;
    // A red frame plus the message in the counter: the state is never told by colour alone.
    m_edit->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 2px solid #D03020; }"));
    m_edit->setToolTip(error.isEmpty() ? tr("Search node names; Enter = next hit, Shift+Enter = previous") : error);
    updateCounter();
}

QString SearchBar::counterText() const
{
    return m_counter->text();
}

void SearchBar::updateCounter()
{
    // Unknown hit count (-1) keeps the buttons usable: a window that never calls setHits still works.
    const bool canStep = isPatternValid() && !pattern().isEmpty() && m_total != 0;
    m_previous->setEnabled(canStep);
    m_next->setEnabled(canStep);
    if (!isPatternValid()) {
        m_counter->setText(tr("Invalid regex"));
        m_counter->setToolTip(m_errorText);
        return;
    }
    m_counter->setToolTip(QString());
    if (m_total < 0 || pattern().isEmpty())
        m_counter->setText(QString());
    else if (m_total == 0)
        m_counter->setText(tr("No hits"));
    else
        m_counter->setText(tr("%1 / %2").arg(m_current).arg(m_total));
}

bool SearchBar::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_edit && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            if (m_debounce.isActive()) {
                emitSearch();
            } else if (isPatternValid()) {
                if (key->modifiers() & Qt::ShiftModifier)
                    emit previousRequested();
                else
                    emit nextRequested();
            }
            return true;
        }
        if (key->key() == Qt::Key_Escape) {
            emit dismissed();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void SearchBar::retranslate()
{
    m_edit->setPlaceholderText(tr("Search nodes (Ctrl+F)"));
    m_edit->setToolTip(tr("Search node names; Enter = next hit, Shift+Enter = previous"));
    m_regex->setToolTip(tr("Regular expression"));
    m_case->setToolTip(tr("Match case"));
    m_previous->setToolTip(tr("Previous hit (Shift+Enter)"));
    m_next->setToolTip(tr("Next hit (Enter)"));
}

void SearchBar::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

} // namespace probescope::ui
