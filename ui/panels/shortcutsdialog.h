// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QList>
#include <QString>

class QAction;
class QLineEdit;
class QTableWidget;

namespace probescope::ui {

struct ShortcutEntry
{
    QString action;              ///< what it does ("Next failing node")
    QList<QKeySequence> keys;    ///< every binding
    QString description;         ///< longer help (status tip), may be empty
};

/// The entries of actions that have a shortcut, in the given order ("&Open…" shows as "Open…").
QList<ShortcutEntry> shortcutEntries(const QList<QAction*>& actions);

/**
 * @brief Help → Keyboard shortcuts: a filterable table of action, keys (native text) and description.
 * The window passes its QActions (or ready entries).
 */
class ShortcutsDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ShortcutsDialog(const QList<QAction*>& actions, QWidget* parent = nullptr);
    explicit ShortcutsDialog(const QList<ShortcutEntry>& entries, QWidget* parent = nullptr);

    QTableWidget* table() const { return m_table; }
    /// Shows only rows whose action, keys or description contain `text` (case-insensitive).
    void setFilterText(const QString& text);
    int visibleRowCount() const;

private:
    void build(const QList<ShortcutEntry>& entries);

    QLineEdit* m_filter = nullptr;
    QTableWidget* m_table = nullptr;
};

} // namespace probescope::ui
