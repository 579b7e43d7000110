// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/panels/settings.h"

#include <QDialog>

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QListWidget;

namespace probescope::ui {

/**
 * @brief File → Open pair…: both sides of a pair at once, so a new NPU dump is never compared silently
 * against the bench that happens to be open.
 *
 * NPU and bench fields (typed, browsed, or dropped: one folder onto a field, two folders onto the dialog),
 * the recent pairs, and the options that change the compare (-f, -s; the mapping files stay in Settings and
 * are listed). Open stays disabled, with the reason shown under the fields, until both sides are given
 * (an msprobe compare.json alone names both).
 */
class OpenPairDialog : public QDialog
{
    Q_OBJECT
public:
    enum class Focus { Npu, Bench };

    OpenPairDialog(const Settings& settings, const QString& npu, const QString& bench, QWidget* parent = nullptr);

    QString npu() const;
    QString bench() const;
    /// The settings given, with the dialog's compare options applied.
    Settings settings() const;
    void focusField(Focus field);
    /// Fills the fields from local paths (a drop): two paths are NPU then bench; one goes to `field`.
    void fillFromPaths(const QStringList& paths, Focus field);
    /// Why Open is disabled ("" when it is enabled).
    QString missingReason() const;

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void update();

    Settings m_settings;
    QLineEdit* m_npu = nullptr;
    QLineEdit* m_bench = nullptr;
    QListWidget* m_recent = nullptr;
    QCheckBox* m_fuzzy = nullptr;
    QCheckBox* m_stack = nullptr;
    QLabel* m_reason = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

/// The recent pairs, newest first, as MainWindow stores them ("recent/pairs": "NPU\nBENCH").
QList<QPair<QString, QString>> recentPairs();

} // namespace probescope::ui
