// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/panels/settings.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace probescope::ui {

/**
 * @brief Edits a Settings value: colour scheme and band limits (validated 0 < warning < error ≤ 1; OK is
 * disabled with the reason shown while they are not), theme, language (on restart, said next to it),
 * compare threads, fuzzy matching, stack mode and msprobe's mapping options (-dm/-cm/-am/-lm, each on or off
 * with an optional file), export profile and XLSX. The caller reads settings() after exec()
 * returns Accepted, then saves and applies it.
 */
class SettingsDialog : public QDialog
{
    Q_OBJECT
public:
    explicit SettingsDialog(const Settings& initial, QWidget* parent = nullptr);

    Settings settings() const;
    void setSettings(const Settings& settings);
    bool isValid() const;
    /// The validation message shown (empty when valid).
    QString validationMessage() const;
    /// Whether the language differs from the one the dialog opened with (a restart is needed).
    bool languageChanged() const;

private:
    void updateState();

    Settings m_initial;
    QComboBox* m_scheme = nullptr;
    QDoubleSpinBox* m_warningFrom = nullptr;
    QDoubleSpinBox* m_errorFrom = nullptr;
    QLabel* m_validation = nullptr;
    QComboBox* m_theme = nullptr;
    QComboBox* m_language = nullptr;
    QLabel* m_restartNote = nullptr;
    QSpinBox* m_threads = nullptr;
    QCheckBox* m_fuzzy = nullptr;
    QCheckBox* m_stackMode = nullptr;
    /// One mapping option: whether it is given, and its file.
    struct MappingRow
    {
        QCheckBox* on = nullptr;
        QLineEdit* file = nullptr;
        std::optional<QString> value() const;
        void set(const std::optional<QString>& value);
    };
    MappingRow m_dataMapping;
    MappingRow m_cellMapping;
    MappingRow m_apiMapping;
    MappingRow m_layerMapping;
    QComboBox* m_profile = nullptr;
    QCheckBox* m_xlsx = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace probescope::ui
