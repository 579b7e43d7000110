// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/panels/settings.h"

#include <QDialog>

class QCheckBox;
class QDialogButtonBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTimer;

namespace probescope::ui {

/**
 * @brief File → Open pair…: both sides of a pair at once, so a new NPU dump is never compared silently
 * against the bench that happens to be open.
 *
 * NPU and bench fields (typed, browsed, or dropped: one folder onto a field, two folders onto the dialog),
 * the recent pairs, and the options that change the compare (-f, -s; the mapping files stay in Settings and
 * are listed). Under each field it says what discovery (dump::discoverDump) found there — steps, ranks, the
 * format — and under both, which pairs will be compared. Open stays disabled, with the reason shown under the
 * fields, until both sides are given (an msprobe compare.json alone names both) and discovery finds each side
 * sound: a folder it cannot read, or one holding two dumps at the same step and rank, is refused with a reason.
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
    /// What was found in the NPU / bench field and what will be compared (the texts under the fields).
    QString npuPreview() const;
    QString benchPreview() const;
    QString pairPreview() const;

public slots:
    /// Never accepts while Open would be disabled (Enter, a double-click on a recent pair).
    void accept() override;

protected:
    void changeEvent(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void update();
    void retranslate();
    /// A field's text changed: typing waits for a pause (discovery walks folders), anything else updates now.
    void fieldChanged();

    Settings m_settings;
    QLineEdit* m_npu = nullptr;
    QLineEdit* m_bench = nullptr;
    QPushButton* m_npuBrowse = nullptr;
    QPushButton* m_benchBrowse = nullptr;
    QLabel* m_npuLabel = nullptr;
    QLabel* m_benchLabel = nullptr;
    QGroupBox* m_recentBox = nullptr;
    QGroupBox* m_optionsBox = nullptr;
    QLabel* m_mappingLabel = nullptr;
    QListWidget* m_recent = nullptr;
    QCheckBox* m_fuzzy = nullptr;
    QCheckBox* m_stack = nullptr;
    QLabel* m_reason = nullptr;
    QLabel* m_npuFound = nullptr;
    QLabel* m_benchFound = nullptr;
    QLabel* m_pairFound = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QTimer* m_typingPause = nullptr;
    bool m_typed = false;
    QString m_reasonText; ///< missingReason() as of the last update
};

/// The recent pairs, newest first, as MainWindow stores them ("recent/pairs": "NPU\nBENCH").
QList<QPair<QString, QString>> recentPairs();

} // namespace probescope::ui
