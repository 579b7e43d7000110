// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/openpairdialog.h"

#include "ui/jobs/graphfilejob.h"

#include "core/freebench/freebenchcsv.h"
#include "ui/panels/dumppreview.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeyEvent>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QTimer>
#include <QVBoxLayout>

#include <utility>

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
    return info.isFile() && info.suffix() == QLatin1String("json") && info.fileName() != QLatin1String("dump.json")
        && info.fileName() != QLatin1String("debug.json");
}

// A file that opens with no bench beside it: msprobe's compare.json, or one of msprobe's graph files (.vis.db, .vis,
// .trend.db; issue 27), which the window shows on their own page.
bool opensAlone(const QString& path)
{
    return isCompareJson(path) || (isGraphFilePath(path) && QFileInfo(path).isFile());
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
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);
    m_typingPause = new QTimer(this);
    m_typingPause->setSingleShot(true);
    m_typingPause->setInterval(250);
    connect(m_typingPause, &QTimer::timeout, this, &OpenPairDialog::update);

    auto* fields = new QGridLayout;
    int row = 0;
    auto addField = [&](QLineEdit*& edit, QPushButton*& browse, QLabel*& label, QLabel*& found, const QString& objectName,
                        const QString& text, bool npuSide) {
        label = new QLabel(this);
        edit = new QLineEdit(text, this);
        edit->setObjectName(objectName);
        edit->setClearButtonEnabled(true);
        edit->installEventFilter(this);
        edit->setAcceptDrops(true);
        label->setBuddy(edit);
        browse = new QPushButton(this);
        browse->setObjectName(objectName + QStringLiteral("Browse"));
        found = new QLabel(this);
        found->setObjectName(objectName + QStringLiteral("Found"));
        found->setWordWrap(true);
        found->setTextFormat(Qt::PlainText);
        found->setTextInteractionFlags(Qt::TextSelectableByMouse);
        fields->addWidget(label, row, 0);
        fields->addWidget(edit, row, 1);
        fields->addWidget(browse, row, 2);
        fields->addWidget(found, row + 1, 1, 1, 2);
        row += 2;
        connect(edit, &QLineEdit::textChanged, this, &OpenPairDialog::fieldChanged);
        connect(browse, &QPushButton::clicked, this, [this, edit, npuSide] {
            // An empty field starts where the last file dialog ended (MainWindow::lastDialogFolder's setting): the
            // dialogs forgot it (issue 36 item 12). A chosen dump's parent is remembered: its bench is a sibling.
            QSettings store;
            const QString last = store.value(QStringLiteral("dialogs/lastFolder")).toString();
            const QString start = !edit->text().trimmed().isEmpty() || !QFileInfo(last).isDir() ? edit->text() : last;
            const QString dir = QFileDialog::getExistingDirectory(this, npuSide ? tr("Open NPU dump") : tr("Open bench dump"),
                                                                  start);
            if (!dir.isEmpty()) {
                edit->setText(dir);
                store.setValue(QStringLiteral("dialogs/lastFolder"), QFileInfo(dir).absolutePath());
            }
        });
    };
    addField(m_npu, m_npuBrowse, m_npuLabel, m_npuFound, QStringLiteral("npuField"), npu, true);
    addField(m_bench, m_benchBrowse, m_benchLabel, m_benchFound, QStringLiteral("benchField"), bench, false);
    fields->setColumnStretch(1, 1);
    layout->addLayout(fields);
    m_pairFound = new QLabel(this);
    m_pairFound->setObjectName("pairPreview");
    m_pairFound->setWordWrap(true);
    m_pairFound->setTextFormat(Qt::PlainText);
    m_pairFound->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_pairFound);
    m_reason = new QLabel(this);
    m_reason->setObjectName("missingReason");
    m_reason->setWordWrap(true);
    m_reason->setTextFormat(Qt::PlainText);
    m_reason->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_reason);

    m_recentBox = new QGroupBox(this);
    auto* recentLayout = new QVBoxLayout(m_recentBox);
    m_recent = new QListWidget(m_recentBox);
    m_recent->setObjectName("recentPairs");
    for (const auto& [n, b] : recentPairs()) {
        auto* item = new QListWidgetItem(b.isEmpty() ? n : n + QStringLiteral("  ↔  ") + b, m_recent);
        item->setData(Qt::UserRole, n);
        item->setData(Qt::UserRole + 1, b);
        item->setToolTip(item->text());
    }
    recentLayout->addWidget(m_recent);
    layout->addWidget(m_recentBox, 1);
    connect(m_recent, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (!item)
            return;
        m_npu->setText(item->data(Qt::UserRole).toString());
        m_bench->setText(item->data(Qt::UserRole + 1).toString());
    });
    connect(m_recent, &QListWidget::itemDoubleClicked, this, &OpenPairDialog::accept);

    m_optionsBox = new QGroupBox(this);
    auto* optionsLayout = new QVBoxLayout(m_optionsBox);
    m_fuzzy = new QCheckBox(m_optionsBox);
    m_fuzzy->setChecked(settings.fuzzy);
    m_stack = new QCheckBox(m_optionsBox);
    m_stack->setChecked(settings.stackMode);
    optionsLayout->addWidget(m_fuzzy);
    optionsLayout->addWidget(m_stack);
    m_mappingLabel = new QLabel(m_optionsBox);
    m_mappingLabel->setObjectName("mappingOptions");
    m_mappingLabel->setWordWrap(true);
    optionsLayout->addWidget(m_mappingLabel);
    layout->addWidget(m_optionsBox);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &OpenPairDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    // The keyboard goes from one side to the other first, then to the Browse buttons (issue 28).
    setTabOrder(m_npu, m_bench);
    setTabOrder(m_bench, m_npuBrowse);
    setTabOrder(m_npuBrowse, m_benchBrowse);
    setTabOrder(m_benchBrowse, m_recent);
    setTabOrder(m_recent, m_fuzzy);
    setTabOrder(m_fuzzy, m_stack);
    resize(760, 520);
    retranslate();
    update();
}

void OpenPairDialog::retranslate()
{
    setWindowTitle(tr("Open pair"));
    m_npuLabel->setText(tr("&NPU dump:"));
    m_benchLabel->setText(tr("&Bench dump:"));
    for (QLineEdit* edit : { m_npu, m_bench })
        edit->setPlaceholderText(tr("dump root, step or rank folder, dump.json or .pkl; drop a folder here"));
    m_npuBrowse->setText(tr("Browse…"));
    m_benchBrowse->setText(tr("Browse…"));
    m_recentBox->setTitle(tr("Recent pairs"));
    m_optionsBox->setTitle(tr("Compare options"));
    m_fuzzy->setText(tr("Fuzzy matching (-f)"));
    m_stack->setText(tr("Stack column (-s)"));
    QStringList mappings;
    const auto note = [&](const std::optional<QString>& option, const char* flag) {
        if (option)
            mappings << (option->isEmpty() ? QString::fromLatin1(flag) : QStringLiteral("%1 %2").arg(QLatin1String(flag), *option));
    };
    note(m_settings.dataMapping, "-dm");
    note(m_settings.cellMapping, "-cm");
    note(m_settings.apiMapping, "-am");
    note(m_settings.layerMapping, "-lm");
    m_mappingLabel->setText(mappings.isEmpty() ? tr("Mapping options: none (Tools → Settings to set -dm, -cm, -am, -lm).")
                                               : tr("Mapping options: %1 (Tools → Settings to change).").arg(mappings.join(QStringLiteral(", "))));
    update();
}

void OpenPairDialog::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange && m_buttons)
        retranslate();
    QDialog::changeEvent(event);
}

void OpenPairDialog::fieldChanged()
{
    if (!std::exchange(m_typed, false)) {
        update();
        return;
    }
    // Typed: wait for a pause, and open nothing meanwhile (the texts below describe the previous path).
    m_buttons->button(QDialogButtonBox::Open)->setEnabled(false);
    m_typingPause->start();
}

void OpenPairDialog::accept()
{
    update();
    if (!m_reasonText.isEmpty())
        return;
    QDialog::accept();
}

QString OpenPairDialog::npu() const { return m_npu->text().trimmed(); }

QString OpenPairDialog::bench() const { return opensAlone(npu()) ? QString() : m_bench->text().trimmed(); }

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
    if (isGraphFilePath(npu()) && QFileInfo(npu()).isFile())
        return {}; // read when opened, in the background: its errors name the file then
    if (isCompareJson(npu())) {
        const PairPreview p = previewPair(npu(), QString());
        return p.ok ? QString() : tr("Nothing to compare: %1").arg(p.text);
    }
    // A free benchmark run needs no bench: its free_benchmark.csv files open alone (folder names only are
    // listed, so this is cheap enough to run as the user types).
    if (m_bench->text().trimmed().isEmpty() && !probescope::freebench::findFreeBenchmarkCsvs(npu().toStdString()).empty())
        return {};
    if (const DumpPreview n = previewDump(npu()); !n.ok)
        return tr("The NPU dump cannot be opened: %1").arg(n.problem);
    if (m_bench->text().trimmed().isEmpty())
        return tr("Give the bench dump (or open msprobe's compare.json as the NPU side).");
    if (!QFileInfo::exists(bench()))
        return tr("The bench dump %1 does not exist.").arg(bench());
    if (const DumpPreview b = previewDump(bench()); !b.ok)
        return tr("The bench dump cannot be opened: %1").arg(b.problem);
    if (const PairPreview p = previewPair(npu(), bench()); !p.ok)
        return tr("Nothing to compare: %1").arg(p.text);
    return {};
}

QString OpenPairDialog::npuPreview() const { return m_npuFound->text(); }

QString OpenPairDialog::benchPreview() const { return m_benchFound->text(); }

QString OpenPairDialog::pairPreview() const { return m_pairFound->text(); }

void OpenPairDialog::update()
{
    m_typingPause->stop();
    m_reasonText = missingReason();
    // What each field holds, as discovery finds it, before anything is read. A problem the reason line below already
    // gives is not said twice (the parent folder's refusal read twice, issue 36 item 12).
    const auto describe = [this](QLabel* label, const QString& path, bool enabled) {
        const DumpPreview found = enabled && QFileInfo::exists(path) && !opensAlone(path) ? previewDump(path) : DumpPreview {};
        QString text = found.ok ? found.summary : found.problem;
        if (!found.ok && !found.problem.isEmpty() && m_reasonText.contains(found.problem))
            text.clear();
        for (const QString& note : found.notes)
            text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + note;
        label->setText(text);
        label->setVisible(!text.isEmpty());
    };
    describe(m_npuFound, npu(), true);
    describe(m_benchFound, bench(), !opensAlone(npu()));
    QString pairs;
    if (m_reasonText.isEmpty() && isGraphFilePath(npu()) && opensAlone(npu())) {
        pairs = tr("An msprobe graph file: it opens on its own (no bench dump).");
    } else if (m_reasonText.isEmpty() && QFileInfo::exists(npu()) && (isCompareJson(npu()) || !bench().isEmpty())) {
        const PairPreview p = previewPair(npu(), bench());
        pairs = p.text;
        for (const QString& note : p.notes)
            pairs += QLatin1Char('\n') + note;
    } else if (m_reasonText.isEmpty() && bench().isEmpty()) {
        pairs = tr("Free benchmark results only: nothing is compared without a bench dump.");
    }
    m_pairFound->setText(pairs);
    m_pairFound->setVisible(!pairs.isEmpty());
    m_reason->setText(m_reasonText);
    m_reason->setVisible(!m_reasonText.isEmpty());
    m_buttons->button(QDialogButtonBox::Open)->setEnabled(m_reasonText.isEmpty());
    m_bench->setEnabled(!opensAlone(npu()));
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
    // A key typed into a field: its textChanged comes next and waits for a pause before discovery runs.
    if ((watched == m_npu || watched == m_bench) && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        const QString text = key->text();
        m_typed = (!text.isEmpty() && text.front().isPrint()) || key->key() == Qt::Key_Backspace
            || key->key() == Qt::Key_Delete || key->matches(QKeySequence::Paste) || key->matches(QKeySequence::Cut);
    }
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
