// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/openpairdialog.h"

#include "core/freebench/freebenchcsv.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace probescope::ui {

namespace {

QStringList localPaths(const QMimeData* mime)
{
    QStringList paths;
    if (!mime || !mime->hasUrls())
        return paths;
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile())
            paths << url.toLocalFile();
    }
    return paths;
}

// msprobe's compare.json names both sides, so it opens alone.
bool isCompareJson(const QString& path)
{
    const QFileInfo info(path);
    return info.isFile() && info.suffix() == QLatin1String("json") && info.fileName() != QLatin1String("dump.json");
}

} // namespace

QList<QPair<QString, QString>> recentPairs()
{
    QList<QPair<QString, QString>> pairs;
    for (const QString& entry : QSettings().value(QStringLiteral("recent/pairs")).toStringList()) {
        const QStringList parts = entry.split(QLatin1Char('\n'));
        pairs.append({ parts.value(0), parts.value(1) });
    }
    return pairs;
}

OpenPairDialog::OpenPairDialog(const Settings& settings, const QString& npu, const QString& bench, QWidget* parent)
    : QDialog(parent)
    , m_settings(settings)
{
    setObjectName("openPairDialog");
    setWindowTitle(tr("Open pair"));
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);

    auto* fields = new QFormLayout;
    auto addField = [&](QLineEdit*& edit, const QString& label, const QString& objectName, const QString& text,
                        const QString& caption) {
        edit = new QLineEdit(text, this);
        edit->setObjectName(objectName);
        edit->setClearButtonEnabled(true);
        edit->setPlaceholderText(tr("dump folder (root, step, rank) or dump.json; drop a folder here"));
        edit->installEventFilter(this);
        edit->setAcceptDrops(true);
        auto* browse = new QPushButton(tr("Browse…"), this);
        auto* row = new QHBoxLayout;
        row->addWidget(edit, 1);
        row->addWidget(browse);
        fields->addRow(label, row);
        connect(edit, &QLineEdit::textChanged, this, &OpenPairDialog::update);
        connect(browse, &QPushButton::clicked, this, [this, edit, caption] {
            const QString dir = QFileDialog::getExistingDirectory(this, caption, edit->text());
            if (!dir.isEmpty())
                edit->setText(dir);
        });
    };
    addField(m_npu, tr("NPU dump:"), QStringLiteral("npuField"), npu, tr("Open NPU dump"));
    addField(m_bench, tr("Bench dump:"), QStringLiteral("benchField"), bench, tr("Open bench dump"));
    layout->addLayout(fields);
    m_reason = new QLabel(this);
    m_reason->setObjectName("missingReason");
    m_reason->setWordWrap(true);
    layout->addWidget(m_reason);

    auto* recentBox = new QGroupBox(tr("Recent pairs"), this);
    auto* recentLayout = new QVBoxLayout(recentBox);
    m_recent = new QListWidget(recentBox);
    m_recent->setObjectName("recentPairs");
    for (const auto& [n, b] : recentPairs()) {
        auto* item = new QListWidgetItem(b.isEmpty() ? n : n + QStringLiteral("  ↔  ") + b, m_recent);
        item->setData(Qt::UserRole, n);
        item->setData(Qt::UserRole + 1, b);
        item->setToolTip(item->text());
    }
    recentLayout->addWidget(m_recent);
    layout->addWidget(recentBox, 1);
    connect(m_recent, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (!item)
            return;
        m_npu->setText(item->data(Qt::UserRole).toString());
        m_bench->setText(item->data(Qt::UserRole + 1).toString());
    });
    connect(m_recent, &QListWidget::itemDoubleClicked, this, [this] {
        if (missingReason().isEmpty())
            accept();
    });

    auto* options = new QGroupBox(tr("Compare options"), this);
    auto* optionsLayout = new QVBoxLayout(options);
    m_fuzzy = new QCheckBox(tr("Fuzzy matching (-f)"), options);
    m_fuzzy->setChecked(settings.fuzzy);
    m_stack = new QCheckBox(tr("Stack column (-s)"), options);
    m_stack->setChecked(settings.stackMode);
    optionsLayout->addWidget(m_fuzzy);
    optionsLayout->addWidget(m_stack);
    QStringList mappings;
    const auto note = [&](const std::optional<QString>& option, const char* flag) {
        if (option)
            mappings << (option->isEmpty() ? QString::fromLatin1(flag) : QStringLiteral("%1 %2").arg(QLatin1String(flag), *option));
    };
    note(settings.dataMapping, "-dm");
    note(settings.cellMapping, "-cm");
    note(settings.apiMapping, "-am");
    note(settings.layerMapping, "-lm");
    auto* mappingLabel = new QLabel(mappings.isEmpty() ? tr("Mapping options: none (Tools → Settings to set -dm, -cm, -am, -lm).")
                                                       : tr("Mapping options: %1 (Tools → Settings to change).").arg(mappings.join(QStringLiteral(", "))),
                                    options);
    mappingLabel->setObjectName("mappingOptions");
    mappingLabel->setWordWrap(true);
    optionsLayout->addWidget(mappingLabel);
    layout->addWidget(options);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(720, 460);
    update();
}

QString OpenPairDialog::npu() const { return m_npu->text().trimmed(); }

QString OpenPairDialog::bench() const { return isCompareJson(npu()) ? QString() : m_bench->text().trimmed(); }

Settings OpenPairDialog::settings() const
{
    Settings s = m_settings;
    s.fuzzy = m_fuzzy->isChecked();
    s.stackMode = m_stack->isChecked();
    return s;
}

void OpenPairDialog::focusField(Focus field)
{
    QLineEdit* edit = field == Focus::Npu ? m_npu : m_bench;
    edit->setFocus();
    edit->selectAll();
}

void OpenPairDialog::fillFromPaths(const QStringList& paths, Focus field)
{
    if (paths.size() >= 2) {
        m_npu->setText(paths[0]);
        m_bench->setText(paths[1]);
    } else if (paths.size() == 1) {
        (field == Focus::Npu ? m_npu : m_bench)->setText(paths[0]);
    }
}

QString OpenPairDialog::missingReason() const
{
    if (npu().isEmpty())
        return tr("Give the NPU dump.");
    if (!QFileInfo::exists(npu()))
        return tr("The NPU dump %1 does not exist.").arg(npu());
    if (isCompareJson(npu()))
        return {};
    // A free benchmark run needs no bench: its free_benchmark.csv files open alone (folder names only are
    // listed, so this is cheap enough to run as the user types).
    if (m_bench->text().trimmed().isEmpty() && !probescope::freebench::findFreeBenchmarkCsvs(npu().toStdString()).empty())
        return {};
    if (m_bench->text().trimmed().isEmpty())
        return tr("Give the bench dump (or open msprobe's compare.json as the NPU side).");
    if (!QFileInfo::exists(bench()))
        return tr("The bench dump %1 does not exist.").arg(bench());
    return {};
}

void OpenPairDialog::update()
{
    const QString reason = missingReason();
    m_reason->setText(reason);
    m_reason->setVisible(!reason.isEmpty());
    m_buttons->button(QDialogButtonBox::Open)->setEnabled(reason.isEmpty());
    m_bench->setEnabled(!isCompareJson(npu()));
}

void OpenPairDialog::dragEnterEvent(QDragEnterEvent* event)
{
    if (!localPaths(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void OpenPairDialog::dropEvent(QDropEvent* event)
{
    const QStringList paths = localPaths(event->mimeData());
    // One folder dropped on the dialog (not on a field) fills the first empty side.
    fillFromPaths(paths, m_npu->text().isEmpty() || paths.size() >= 2 ? Focus::Npu : Focus::Bench);
    event->acceptProposedAction();
}

bool OpenPairDialog::eventFilter(QObject* watched, QEvent* event)
{
    // A folder dropped on a field is that side (QLineEdit would insert the URL as text).
    if ((watched == m_npu || watched == m_bench)
        && (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove || event->type() == QEvent::Drop)) {
        auto* drop = static_cast<QDropEvent*>(event);
        const QStringList paths = localPaths(drop->mimeData());
        if (paths.isEmpty())
            return false;
        if (event->type() == QEvent::Drop)
            fillFromPaths(paths, watched == m_npu ? Focus::Npu : Focus::Bench);
        drop->acceptProposedAction();
        return true;
    }
    return QDialog::eventFilter(watched, event);
}

} // namespace probescope::ui
