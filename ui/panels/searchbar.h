// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>
#include <QTimer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QToolButton;

namespace probescope::ui {

/**
 * @brief Node search: pattern, Regex and Match-case toggles, "3 / 17" hit counter, Previous/Next.
 *
 * Typing is debounced (150 ms by default): searchRequested is emitted once after the user stops typing,
 * and at once when a toggle changes. A regular expression that does not compile is shown as invalid
 * (red frame, the error in the counter's place and tooltip) and is not sent. Enter = next hit,
 * Shift+Enter = previous; Enter while a search is still pending sends that search instead (the window
 * then shows its first hit). Escape emits dismissed(). The window owns Ctrl+F and calls focusSearch().
 */
class SearchBar : public QWidget
{
    Q_OBJECT
public:
    explicit SearchBar(QWidget* parent = nullptr);

    QString pattern() const;
    bool isRegex() const;
    bool isCaseSensitive() const;
    /// Whether the current pattern can be searched (always true unless Regex is on and it does not compile).
    bool isPatternValid() const { return m_errorText.isEmpty(); }
    /// The regular-expression error shown, or empty.
    QString patternError() const { return m_errorText; }
    /// The counter text ("3 / 17", "No hits", "Invalid regex").
    QString counterText() const;
    QLineEdit* lineEdit() const { return m_edit; }

    void setDebounceInterval(int ms) { m_debounce.setInterval(ms); }
    int debounceInterval() const { return m_debounce.interval(); }

public slots:
    /// Shows "current / total" (current is 1-based; 0 = no current hit); total 0 shows "No hits".
    void setHits(int current, int total);
    /// Focuses the line edit and selects its text (what Ctrl+F does).
    void focusSearch();
    void setPattern(const QString& pattern);
    void setRegex(bool on);
    void setCaseSensitive(bool on);
    /// Sends a pending search now (e.g. before the window acts on a hit).
    void flush();

signals:
    void searchRequested(const QString& pattern, bool regex, bool caseSensitive);
    void nextRequested();
    void previousRequested();
    void dismissed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void schedule();
    void emitSearch();
    void validate();
    void updateCounter();

    QLineEdit* m_edit = nullptr;
    QToolButton* m_regex = nullptr;
    QToolButton* m_case = nullptr;
    QLabel* m_counter = nullptr;
    QToolButton* m_previous = nullptr;
    QToolButton* m_next = nullptr;
    QTimer m_debounce;
    QString m_errorText;
    int m_current = 0;
    int m_total = -1; ///< -1: nothing searched yet
};

} // namespace probescope::ui
