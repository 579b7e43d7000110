// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/shortcutsdialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

namespace probescope::ui {

namespace {

// Menu texts carry mnemonics ("&Open") and sometimes a tab-separated accelerator; neither belongs in a table.
// Translations that do not use the letter in their own words put it in brackets ("下一个(&N)", "打开 NPU
// dump(&N)…", "打开图文件(&G)（.vis.db…）…"): that group goes entirely, not just its '&', wherever it stands (one left
// in the middle of a name showed as "(G)", issue 36 item 11).
QString plainActionText(QString text)
{
    text = text.section(QLatin1Char('\t'), 0, 0);
    static const QRegularExpression bracketedMnemonic(QStringLiteral(u"\\s*[(\uff08]&[^&\\s][)\uff09]"));
    text.remove(bracketedMnemonic);
    QString out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] == QLatin1Char('&') && i + 1 < text.size()) {
            ++i; // "&&" is a literal ampersand; "&x" marks x as the mnemonic
        }
        out += text[i];
    }
    return out;
}

// The tooltip QAction makes up when none was set: its text without "..." and without any '&'.
QString defaultToolTip(QString text)
{
    text.remove(QStringLiteral("..."));
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] == QLatin1Char('&'))
            text.remove(i, 1);
    }
    return text.trimmed();
}

} // namespace

QList<ShortcutEntry> shortcutEntries(const QList<QAction*>& actions)
{
    QList<ShortcutEntry> entries;
    for (const QAction* a : actions) {
        // A hidden action (Alt+7 while there are six tabs) has nothing to go to: F1 does not list it.
        if (!a || a->shortcuts().isEmpty() || !a->isVisible())
            continue;
        QString description = a->statusTip();
        const QString text = plainActionText(a->text());
        const QString toolTip = a->toolTip();
        if (description.isEmpty() && toolTip != text && toolTip != defaultToolTip(a->text()))
            description = toolTip;
        entries.append({ text, a->shortcuts(), description });
    }
    return entries;
}

ShortcutsDialog::ShortcutsDialog(const QList<QAction*>& actions, QWidget* parent)
    : ShortcutsDialog(shortcutEntries(actions), parent)
{
}

ShortcutsDialog::ShortcutsDialog(const QList<ShortcutEntry>& entries, QWidget* parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Keyboard shortcuts"));
    auto* layout = new QVBoxLayout(this);
    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter shortcuts"));
    m_filter->setClearButtonEnabled(true);
    layout->addWidget(m_filter);
    m_table = new QTableWidget(this);
    m_table->setColumnCount(3);
    m_table->setHorizontalHeaderLabels({ tr("Action"), tr("Keys"), tr("Description") });
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Descriptions are sentences: wrapped, whole (the O and P ones were cut at the edge, issue 28).
    m_table->setWordWrap(true);
    m_table->setTextElideMode(Qt::ElideNone);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(m_table, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_filter, &QLineEdit::textChanged, this, &ShortcutsDialog::setFilterText);
    resize(760, 560);
    build(entries);
}

void ShortcutsDialog::build(const QList<ShortcutEntry>& entries)
{
    m_table->setRowCount(static_cast<int>(entries.size()));
    for (int r = 0; r < entries.size(); ++r) {
        const ShortcutEntry& e = entries[r];
        QStringList keys;
        for (const QKeySequence& k : e.keys)
            keys << k.toString(QKeySequence::NativeText);
        m_table->setItem(r, 0, new QTableWidgetItem(e.action));
        m_table->setItem(r, 1, new QTableWidgetItem(keys.join(tr(" or "))));
        m_table->setItem(r, 2, new QTableWidgetItem(e.description));
    }
    m_table->resizeColumnToContents(0);
    m_table->resizeColumnToContents(1);
    m_table->resizeRowsToContents();
}

void ShortcutsDialog::setFilterText(const QString& text)
{
    if (m_filter->text() != text) {
        m_filter->setText(text); // filters through textChanged
        return;
    }
    for (int r = 0; r < m_table->rowCount(); ++r) {
        bool match = text.isEmpty();
        for (int c = 0; c < m_table->columnCount() && !match; ++c)
            match = m_table->item(r, c)->text().contains(text, Qt::CaseInsensitive);
        m_table->setRowHidden(r, !match);
    }
}

int ShortcutsDialog::visibleRowCount() const
{
    int n = 0;
    for (int r = 0; r < m_table->rowCount(); ++r)
        n += m_table->isRowHidden(r) ? 0 : 1;
    return n;
}

} // namespace probescope::ui
