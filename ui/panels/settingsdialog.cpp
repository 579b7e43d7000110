// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/settingsdialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace probescope::ui {

namespace {

QDoubleSpinBox* makeLimit(QWidget* parent)
{
    auto* s = new QDoubleSpinBox(parent);
    s->setRange(0.0, 1.0);
    s->setDecimals(2);
    s->setSingleStep(0.05);
    return s;
}

} // namespace

std::optional<QString> SettingsDialog::MappingRow::value() const
{
    if (!on->isChecked())
        return std::nullopt;
    return file->text().trimmed();
}

void SettingsDialog::MappingRow::set(const std::optional<QString>& value)
{
    on->setChecked(value.has_value());
    file->setText(value.value_or(QString()));
    file->setEnabled(value.has_value());
}

SettingsDialog::SettingsDialog(const Settings& initial, QWidget* parent)
    : QDialog(parent)
    , m_initial(initial)
{
    setWindowTitle(tr("Settings"));
    auto* outer = new QVBoxLayout(this);

    auto* colours = new QGroupBox(tr("Node colours"), this);
    auto* cf = new QFormLayout(colours);
    m_scheme = new QComboBox(colours);
    m_scheme->addItem(tr("msprobe rules (pass / warning / error)"),
                      static_cast<int>(session::ColorBands::Scheme::MsprobeRules));
    m_scheme->addItem(tr("Continuous precision index with bands"),
                      static_cast<int>(session::ColorBands::Scheme::ContinuousIndex));
    m_scheme->setToolTip(tr("msprobe rules colour a node by its worst row; the continuous index (older msprobe "
                            "versions) shows how far a node is off and uses the band limits below"));
    cf->addRow(tr("Scheme:"), m_scheme);
    m_warningFrom = makeLimit(colours);
    m_errorFrom = makeLimit(colours);
    cf->addRow(tr("Warning from index:"), m_warningFrom);
    cf->addRow(tr("Error from index:"), m_errorFrom);
    m_validation = new QLabel(colours);
    m_validation->setWordWrap(true);
    m_validation->setStyleSheet(QStringLiteral("color: #C0301A; font-weight: bold;"));
    cf->addRow(m_validation);
    outer->addWidget(colours);

    auto* look = new QGroupBox(tr("Appearance"), this);
    auto* lf = new QFormLayout(look);
    m_theme = new QComboBox(look);
    m_theme->addItem(tr("System"), static_cast<int>(Theme::System));
    m_theme->addItem(tr("Light"), static_cast<int>(Theme::Light));
    m_theme->addItem(tr("Dark"), static_cast<int>(Theme::Dark));
    lf->addRow(tr("Theme:"), m_theme);
    m_language = new QComboBox(look);
    // Each language is named in itself, so a user who cannot read the current one still finds theirs.
    m_language->addItem(QStringLiteral("English"), static_cast<int>(Language::English));
    m_language->addItem(QStringLiteral("简体中文"), static_cast<int>(Language::SimplifiedChinese));
    lf->addRow(tr("Language:"), m_language);
    // Every panel, plot and badge follows at once (issue 28); the note said a restart was needed (issue 36).
    m_restartNote = new QLabel(tr("The language and the theme change for every panel when you press OK; no restart is needed."), look);
    m_restartNote->setWordWrap(true);
    lf->addRow(m_restartNote);
    outer->addWidget(look);

    auto* cmp = new QGroupBox(tr("Compare"), this);
    auto* pf = new QFormLayout(cmp);
    m_threads = new QSpinBox(cmp);
    m_threads->setRange(0, static_cast<int>(kMaxThreads));
    m_threads->setSpecialValueText(tr("Automatic (one per CPU)"));
    m_threads->setToolTip(tr("Tensor pairs compared at once; results never depend on it"));
    pf->addRow(tr("Threads:"), m_threads);
    m_fuzzy = new QCheckBox(tr("Fuzzy matching (-f)"), cmp);
    m_fuzzy->setToolTip(tr("Match APIs by name and order even when their call numbers differ (msprobe's -f)"));
    pf->addRow(m_fuzzy);
    m_stackMode = new QCheckBox(tr("Stack column (-s)"), cmp);
    m_stackMode->setToolTip(tr("Add msprobe's NPU_Stack_Info column from the stack.json beside the NPU dump"));
    pf->addRow(m_stackMode);
    // Each mapping option: a check box (the option is given) and its file (empty: the built-in mapping).
    auto addMapping = [&](MappingRow& row, const QString& label, const QString& tip) {
        row.on = new QCheckBox(label, cmp);
        row.on->setToolTip(tip);
        row.file = new QLineEdit(cmp);
        row.file->setPlaceholderText(tr("mapping .yaml (empty: built-in)"));
        auto* browse = new QPushButton(tr("…"), cmp);
        browse->setToolTip(tr("Choose the mapping file"));
        auto* line = new QHBoxLayout;
        line->addWidget(row.file, 1);
        line->addWidget(browse);
        pf->addRow(row.on, line);
        QLineEdit* file = row.file;
        connect(row.on, &QCheckBox::toggled, file, &QLineEdit::setEnabled);
        connect(row.on, &QCheckBox::toggled, this, &SettingsDialog::updateState);
        connect(row.file, &QLineEdit::textChanged, this, &SettingsDialog::updateState);
        connect(browse, &QPushButton::clicked, this, [this, &row] {
            const QString chosen = QFileDialog::getOpenFileName(this, tr("Mapping file"), row.file->text(),
                                                                tr("YAML (*.yaml *.yml);;All files (*)"));
            if (chosen.isEmpty())
                return;
            row.on->setChecked(true);
            row.file->setText(chosen);
        });
    };
    addMapping(m_dataMapping, tr("Data mapping (-dm)"), tr("msprobe's data_mapping file: NPU row name to bench row name"));
    addMapping(m_cellMapping, tr("Cell mapping (-cm)"), tr("MindSpore cells to PyTorch modules (msprobe's -cm)"));
    addMapping(m_apiMapping, tr("API mapping (-am)"), tr("MindSpore APIs to PyTorch APIs (msprobe's -am)"));
    addMapping(m_layerMapping, tr("Layer mapping (-lm)"), tr("Layers of two model implementations (msprobe's -lm)"));
    outer->addWidget(cmp);

    auto* exp = new QGroupBox(tr("Export"), this);
    auto* ef = new QFormLayout(exp);
    m_profile = new QComboBox(exp);
    m_profile->addItem(tr("msprobe 1.2 (default)"), static_cast<int>(compare::Profile::Msprobe12));
    m_profile->addItem(tr("msprobe 26"), static_cast<int>(compare::Profile::Msprobe26));
    m_profile->setToolTip(tr("Which msprobe version's compare_result CSV the export reproduces"));
    ef->addRow(tr("CSV profile:"), m_profile);
    m_xlsx = new QCheckBox(tr("Also write the XLSX workbook (red/yellow fills)"), exp);
    ef->addRow(m_xlsx);
    outer->addWidget(exp);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::RestoreDefaults,
                                     this);
    outer->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        if (isValid())
            accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { setSettings(Settings {}); });

    connect(m_scheme, &QComboBox::currentIndexChanged, this, &SettingsDialog::updateState);
    connect(m_warningFrom, &QDoubleSpinBox::valueChanged, this, &SettingsDialog::updateState);
    connect(m_errorFrom, &QDoubleSpinBox::valueChanged, this, &SettingsDialog::updateState);
    connect(m_language, &QComboBox::currentIndexChanged, this, &SettingsDialog::updateState);
    setSettings(initial);
}

void SettingsDialog::setSettings(const Settings& s)
{
    m_scheme->setCurrentIndex(std::max(0, m_scheme->findData(static_cast<int>(s.bands.scheme))));
    m_warningFrom->setValue(s.bands.warningFrom);
    m_errorFrom->setValue(s.bands.errorFrom);
    m_theme->setCurrentIndex(std::max(0, m_theme->findData(static_cast<int>(s.theme))));
    m_language->setCurrentIndex(std::max(0, m_language->findData(static_cast<int>(s.language))));
    m_threads->setValue(static_cast<int>(std::min(s.threads, kMaxThreads)));
    m_fuzzy->setChecked(s.fuzzy);
    m_stackMode->setChecked(s.stackMode);
    m_dataMapping.set(s.dataMapping);
    m_cellMapping.set(s.cellMapping);
    m_apiMapping.set(s.apiMapping);
    m_layerMapping.set(s.layerMapping);
    m_profile->setCurrentIndex(std::max(0, m_profile->findData(static_cast<int>(s.exportProfile))));
    m_xlsx->setChecked(s.exportXlsx);
    updateState();
}

Settings SettingsDialog::settings() const
{
    Settings s;
    s.bands.scheme = static_cast<session::ColorBands::Scheme>(m_scheme->currentData().toInt());
    s.bands.warningFrom = m_warningFrom->value();
    s.bands.errorFrom = m_errorFrom->value();
    s.theme = static_cast<Theme>(m_theme->currentData().toInt());
    s.language = static_cast<Language>(m_language->currentData().toInt());
    s.threads = static_cast<unsigned>(m_threads->value());
    s.fuzzy = m_fuzzy->isChecked();
    s.stackMode = m_stackMode->isChecked();
    s.dataMapping = m_dataMapping.value();
    s.cellMapping = m_cellMapping.value();
    s.apiMapping = m_apiMapping.value();
    s.layerMapping = m_layerMapping.value();
    s.exportProfile = static_cast<compare::Profile>(m_profile->currentData().toInt());
    s.exportXlsx = m_xlsx->isChecked();
    return s;
}

bool SettingsDialog::isValid() const
{
    return settings().validate().isEmpty();
}

QString SettingsDialog::validationMessage() const
{
    return m_validation->text();
}

bool SettingsDialog::languageChanged() const
{
    return settings().language != m_initial.language;
}

void SettingsDialog::updateState()
{
    // The limits only mean something for the continuous index; msprobe's rules have fixed levels.
    const bool index = m_scheme->currentData().toInt() == static_cast<int>(session::ColorBands::Scheme::ContinuousIndex);
    m_warningFrom->setEnabled(index);
    m_errorFrom->setEnabled(index);
    const QString why = settings().validate();
    m_validation->setText(why);
    m_validation->setVisible(!why.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setToolTip(why);
    QFont f = m_restartNote->font();
    f.setBold(languageChanged());
    m_restartNote->setFont(f);
}

} // namespace probescope::ui
