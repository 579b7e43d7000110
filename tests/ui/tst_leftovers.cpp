// SPDX-License-Identifier: Apache-2.0
// Wrong-language leftovers (issue 36 item 11), found by walking rather than by listing strings: in Chinese, every
// widget, action, tab, header and model cell of the main window (over a dump pair, a job, the graph files of both
// msprobe versions and a run_ut result) and of its dialogs is read, and a text fails when it holds an English UI word
// from a small list, a mnemonic left over outside a menu ("&X" or a bare "(X)"), or when two distinct source texts of
// the catalogue share one translation. The next leftover fails here, whatever its string.
#include "core/tempdir.h"
#include "testconfig.h"
#include "ui/fakerunut.h"
#include "ui/panels/detailpanel.h"
#include "ui/panels/exportdialog.h"
#include "ui/panels/openpairdialog.h"
#include "ui/panels/runutdialog.h"
#include "ui/panels/settings.h"
#include "ui/panels/settingsdialog.h"
#include "ui/panels/shortcutsdialog.h"
#include "ui/views/mainwindow.h"
#include "ui/views/scriptedrun.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QTextEdit>
#include <QSettings>
#include <QTableView>
#include <QXmlStreamReader>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

using namespace probescope;
using namespace probescope::ui;
namespace fs = std::filesystem;

namespace {

QString q(const fs::path& p) { return QString::fromStdString(p.string()); }
fs::path fixture(const char* name) { return probescope::testing::fixturesDir() / name; }

/// English words of the interface that a Chinese text never keeps. msprobe's own terms that its Chinese documents
/// keep (dump, step, rank, API, NPU, msprobe's column names) are not in the list; verdict words are.
const std::set<QString>& englishWords()
{
    static const std::set<QString> words {
        "none",    "unsupported", "format", "pending", "failed",  "profile", "tab",     "first",   "failing", "failure", "pass",
        "passed",  "error",       "errors",  "warning", "warnings", "skip",   "skipped", "details", "detail",
        "node",    "nodes",       "open",    "show",    "hide",    "yes",     "no",      "match",
        "matched", "unmatched",   "verdict", "total",   "input",   "inputs",  "output",  "outputs", "bench", "sent", "received",
        "overview", "select",     "search",  "filter",  "forward", "backward", "overall", "dumped", "replay",
        "running", "finished",    "cancel",  "close",   "save",    "settings", "language", "theme", "loading",
        "comparing", "origin",  "job",    "page",    "status",  "value",
        "values",  "name",        "path",    "folder",  "missing", "found",   "nothing", "unknown", "the",
    };
    return words;
}

struct Text
{
    QString where;
    QString text;
    bool menuText = false; ///< an action's, button's or menu's text: "(&X)" is its mnemonic
};

QString describe(const QObject* o)
{
    QString d = QString::fromLatin1(o->metaObject()->className());
    if (!o->objectName().isEmpty())
        d += QLatin1Char('#') + o->objectName();
    return d;
}

void add(std::vector<Text>& out, const QString& where, const QString& text, bool menuText = false)
{
    if (!text.trimmed().isEmpty())
        out.push_back({ where, text, menuText });
}

/// Every cell (display and tooltip) and header of a model, breadth first, capped so a big tree stays quick.
bool hasCjk(const QString& text)
{
    return std::any_of(text.begin(), text.end(), [](QChar c) { return c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF; });
}

/// A column (or, in a transposed table, a row) named by msprobe: its header stays msprobe's English name in Chinese,
/// and its cells are msprobe's values (Cosine's numbers, "Yes"/"No" of "Accuracy Reached or Not", msprobe's
/// Err_message sentences). Its header is still checked; its cells are data.
bool msprobeHeader(const QAbstractItemModel* model, int section, Qt::Orientation o)
{
    const QString h = model->headerData(section, o, Qt::DisplayRole).toString();
    return !h.isEmpty() && !hasCjk(h) && !h.at(0).isDigit();
}

void addModel(std::vector<Text>& out, const QString& where, const QAbstractItemModel* model)
{
    if (!model)
        return;
    for (int c = 0; c < model->columnCount(); ++c) {
        add(out, where + " header", model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
        add(out, where + " header tooltip", model->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString());
    }
    std::vector<QModelIndex> todo { QModelIndex() };
    int cells = 0;
    while (!todo.empty() && cells < 4000) {
        const QModelIndex parent = todo.front();
        todo.erase(todo.begin());
        for (int r = 0; r < model->rowCount(parent) && cells < 4000; ++r) {
            for (int c = 0; c < model->columnCount(parent); ++c) {
                const QModelIndex i = model->index(r, c, parent);
                ++cells;
                if (!parent.isValid() && (msprobeHeader(model, c, Qt::Horizontal) || msprobeHeader(model, r, Qt::Vertical)))
                    continue;
                add(out, where + QStringLiteral(" cell %1,%2").arg(r).arg(c), i.data(Qt::DisplayRole).toString());
                add(out, where + QStringLiteral(" tooltip %1,%2").arg(r).arg(c), i.data(Qt::ToolTipRole).toString());
                if (c == 0 && model->hasChildren(i))
                    todo.push_back(i);
            }
        }
    }
}

/// What a user can read in `root` and below: texts, titles, placeholders, tooltips, tabs, actions, item views.
std::vector<Text> readableTexts(QWidget* root)
{
    std::vector<Text> out;
    // The window's title names the opened files (a folder called "bench"), no word of the interface: not read.
    if (!root->isWindow() || root->inherits("QDialog"))
        add(out, describe(root) + " title", root->windowTitle());
    QList<QWidget*> widgets = root->findChildren<QWidget*>();
    widgets.prepend(root);
    for (QWidget* w : widgets) {
        const QString d = describe(w);
        add(out, d + " tooltip", w->toolTip());
        add(out, d + " status tip", w->statusTip());
        if (auto* l = qobject_cast<QLabel*>(w))
            add(out, d, l->text(), l->buddy() != nullptr);
        if (auto* b = qobject_cast<QAbstractButton*>(w))
            add(out, d, b->text(), true);
        if (auto* g = qobject_cast<QGroupBox*>(w))
            add(out, d, g->title(), true);
        if (auto* e = qobject_cast<QLineEdit*>(w))
            add(out, d + " placeholder", e->placeholderText());
        if (auto* c = qobject_cast<QComboBox*>(w)) {
            add(out, d + " placeholder", c->placeholderText());
            for (int i = 0; i < c->count(); ++i)
                add(out, d + " item", c->itemText(i));
        }
        if (auto* t = qobject_cast<QTabWidget*>(w)) {
            for (int i = 0; i < t->count(); ++i) {
                add(out, d + " tab", t->tabText(i), true);
                add(out, d + " tab tooltip", t->tabToolTip(i));
            }
        }
        if (auto* m = qobject_cast<QMenu*>(w))
            add(out, d + " menu", m->title(), true);
        if (auto* t = qobject_cast<QTextEdit*>(w))
            add(out, d, t->toPlainText());
        // A QPlainTextEdit holds a dump's stack: the user's code, not the interface.
        if (auto* v = qobject_cast<QAbstractItemView*>(w))
            addModel(out, d, v->model());
    }
    // An action's own tooltip is shown on tool buttons only (none here; F1's table is read as a dialog).
    for (QAction* a : root->findChildren<QAction*>()) {
        if (a->isSeparator())
            continue;
        const QString d = describe(a);
        add(out, d, a->text(), true);
        add(out, d + " status tip", a->statusTip());
    }
    return out;
}

/// Why `t` reads as a leftover in the Chinese interface, or an empty string.
QString leftover(const Text& t)
{
    // The text as shown, without what is a name rather than a word: HTML tags, paths, node and file names, options,
    // format placeholders (words joined to '.', '/', '_', '-', '%', digits or '=' are names).
    QString text = t.text;
    static const QRegularExpression tags(QStringLiteral("<[^>]*>"));
    text.remove(tags);
    // Break opportunities put into long names (zero-width spaces after their dots) are no word boundary.
    text.remove(QChar(0x200B));
    // msprobe's own sentences, shown as msprobe wrote them and labelled so: "msprobe：<its legend>" in a tooltip, a
    // legend line "error: 此节点…" of a graph file, the Err_message sentences of its compare.
    static const QRegularExpression msprobeText(QStringLiteral(u"msprobe[^\n:：]{0,8}[:：][^\n]*|(?m)^\\s*(pass|warning|error)\\s*:\\s*[^\n]*[\u4e00-\u9fff][^\n]*$"));
    text.remove(msprobeText);
    // A node's msprobe data as the file holds it (a graph file's details): after msprobe's "input_data" /
    // "output_data" key, and after the stack's heading, come msprobe's keys and values and the user's stack, up to the
    // next line of the interface (one in Chinese).
    {
        QStringList lines = text.split(QLatin1Char('\n'));
        bool data = false;
        for (QString& line : lines) {
            const QString l = line.trimmed();
            if (hasCjk(l))
                data = l == QStringLiteral(u"堆栈") || l == QStringLiteral(u"NPU 堆栈") || l == QStringLiteral(u"标杆堆栈");
            else if (l.endsWith(QLatin1String("_data")) || l == QLatin1String("parameters"))
                data = true;
            else if (data)
                line.clear();
        }
        text = lines.join(QLatin1Char('\n'));
    }
    static const QRegularExpression errMessage(QStringLiteral("(The input/parameters's|The output's|Need double check api accuracy|maximum relative error exceeds)[^\n]*"));
    text.remove(errMessage);
    static const QRegularExpression word(QStringLiteral("(?<![\\w./\\\\%=\\-])([A-Za-z]+)(?![\\w./\\\\=\\-(])"));
    QStringList english;
    for (auto it = word.globalMatch(text); it.hasNext();) {
        const QString w = it.next().captured(1);
        if (englishWords().count(w.toLower()))
            english << w;
    }
    if (!english.isEmpty())
        return QStringLiteral("English word(s) %1").arg(english.join(QLatin1Char(',')));
    // A mnemonic: "(&X)" is one in a menu's, button's or buddy label's text; anywhere else an '&' before a letter is
    // shown as it is, and a bracketed single capital is a mnemonic whose '&' was dropped ("查找(F)").
    static const QRegularExpression amp(QStringLiteral("&(?!&)[A-Za-z]"));
    static const QRegularExpression bare(QStringLiteral(u"[(\uff08][A-Z][)\uff09]"));
    static const QRegularExpression keyName(QStringLiteral(u"[(\uff08][A-Z][)\uff09]\\s*[:：]"));
    QString noDouble = text;
    noDouble.remove(QStringLiteral("&&"));
    if (!t.menuText && amp.match(noDouble).hasMatch())
        return QStringLiteral("a mnemonic shown as text");
    QString noMnemonic = text;
    static const QRegularExpression mnemonic(QStringLiteral(u"[(\uff08]&[A-Za-z][)\uff09]"));
    noMnemonic.remove(mnemonic);
    // "(O):" after an action's name is the key to press (the status line's "作业偏差源头 (O)："), kept.
    noMnemonic.remove(keyName);
    if (bare.match(noMnemonic).hasMatch())
        return QStringLiteral("a mnemonic without its '&'");
    return {};
}

} // namespace

namespace {

/// Chinese for one test; English and the tree-only window again afterwards (the settings every ui test shares).
struct Chinese
{
    Chinese() { switchLanguage(*qApp, QStringLiteral("zh_CN")); }
    ~Chinese()
    {
        QSettings().remove(QStringLiteral("window/showGraph"));
        switchLanguage(*qApp, QStringLiteral("en"));
    }
};

::testing::AssertionResult noLeftovers(QWidget* root, const char* scene)
{
    QStringList found;
    std::set<QString> seen;
    const std::vector<Text> texts = readableTexts(root);
    for (const Text& t : texts) {
        const QString why = leftover(t);
        if (why.isEmpty() || !seen.insert(t.where + t.text).second)
            continue;
        found << QStringLiteral("%1: %2: \"%3\"").arg(t.where, why, t.text.left(qEnvironmentVariableIsSet("LEFTOVERS_FULL") ? 100000 : 160));
    }
    if (texts.size() < 5)
        return ::testing::AssertionFailure() << scene << ": only " << texts.size() << " texts read";
    if (found.isEmpty())
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << scene << ": " << found.size() << " leftover(s) of " << texts.size()
                                         << " texts:\n  " << found.mid(0, 60).join("\n  ").toStdString();
}

::testing::AssertionResult openAndWait(MainWindow& window, const QString& npu, const QString& bench = {})
{
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    if (!window.openInputs(npu, bench))
        return ::testing::AssertionFailure() << "cannot open " << npu.toStdString();
    if (finished.isEmpty() && !finished.wait(120000))
        return ::testing::AssertionFailure() << "timeout";
    if (!finished.takeFirst().at(0).toBool())
        return ::testing::AssertionFailure() << "failed: " << npu.toStdString();
    // The job's overview, the graph's sides and the window's own follow-ups settle.
    if (!QTest::qWaitFor([&] { return !window.isComparing(); }, 60000))
        return ::testing::AssertionFailure() << "still comparing";
    QTest::qWait(300);
    return ::testing::AssertionSuccess();
}

/// The window as a laptop shows it (1366 × 768), with or without the graph view.
void showOnALaptop(MainWindow& window, bool graphView)
{
    window.setQuiet(true);
    window.resize(1366, 768);
    window.show();
    window.setGraphViewShown(graphView);
}

/// Every tab of the right-hand side shown once (some fill when first shown), then back to Details.
void visitTabs(MainWindow& window)
{
    for (int i = 0; i < window.tabs()->count(); ++i) {
        window.tabs()->setCurrentIndex(i);
        QTest::qWait(i == 3 ? 800 : 100);
    }
    window.tabs()->setCurrentIndex(0);
}

} // namespace

// The English-word and mnemonic rules catch what they are for (a rule that cannot fail finds nothing).
TEST(Leftovers, TheRulesCatchWhatTheyAreFor)
{
    EXPECT_FALSE(leftover({ "x", QStringLiteral("rank 总览 none") }).isEmpty());
    EXPECT_FALSE(leftover({ "x", QStringLiteral("详情：unsupported") }).isEmpty());
    EXPECT_FALSE(leftover({ "x", QStringLiteral("查找(F)…") }).isEmpty());
    EXPECT_FALSE(leftover({ "x", QStringLiteral("查找(&F)…") }).isEmpty()) << "a cell shows '&' as it is";
    EXPECT_TRUE(leftover({ "x", QStringLiteral("查找(&F)…"), true }).isEmpty()) << "a menu's mnemonic";
    EXPECT_FALSE(leftover({ "x", QStringLiteral("Step") }).isEmpty() && leftover({ "x", QStringLiteral("Tab 7") }).isEmpty());
    // Names, paths, options and msprobe's terms are not words of the interface.
    EXPECT_TRUE(leftover({ "x", QStringLiteral("首个不达标节点 Functional.gelu.0.forward（/tmp/npu/step0/rank/dump.json）") }).isEmpty());
    EXPECT_TRUE(leftover({ "x", QStringLiteral("作业偏差源头 (O)：rank 1，节点 Functional.relu.0.forward") }).isEmpty());
    EXPECT_TRUE(leftover({ "x", QStringLiteral("Cosine · MaxAbsErr · dump · step · NPU · --match-mode") }).isEmpty());
    EXPECT_TRUE(leftover({ "x", QStringLiteral(u"首个不达标 #3：Distributed.\u200ball_reduce.\u200b1.\u200bforward") }).isEmpty());
}

// A dump pair with the graph view on, every tab visited; then its dialogs (F1's table, export, run_ut, settings,
// open pair).
TEST(Leftovers, PairInChinese)
{
    Chinese zh;
    MainWindow window;
    showOnALaptop(window, true);
    ASSERT_TRUE(openAndWait(window, q(fixture("modelA_tensor_mix") / "npu"), q(fixture("modelA_tensor_mix") / "bench")));
    visitTabs(window);
    EXPECT_TRUE(noLeftovers(&window, "pair"));
    // The dialogs, as the menus open them.
    const Settings settings;
    ShortcutsDialog shortcuts(window.shortcutActions(), &window);
    EXPECT_TRUE(noLeftovers(&shortcuts, "F1's table"));
    ExportDialog exportDialog(window.analysis(), settings, &window);
    EXPECT_TRUE(noLeftovers(&exportDialog, "export"));
    SettingsDialog settingsDialog(settings, &window);
    EXPECT_TRUE(noLeftovers(&settingsDialog, "settings"));
    auto runUt = window.createRunUtDialog();
    EXPECT_TRUE(noLeftovers(runUt.get(), "run_ut"));
    OpenPairDialog openPair(settings, q(fixture("modelA_tensor_mix") / "npu"), q(fixture("modelA_tensor_mix") / "bench"), &window);
    EXPECT_TRUE(noLeftovers(&openPair, "open pair"));
}

// A job (two ranks), landed on its origin, every tab visited.
TEST(Leftovers, JobInChinese)
{
    Chinese zh;
    MainWindow window;
    showOnALaptop(window, true);
    const fs::path job = fixture("msprobe26_da") / "SYNTH_allreduce_group_2r" / "inputs";
    QSignalSpy overview(&window, &MainWindow::overviewFinished);
    ASSERT_TRUE(openAndWait(window, q(job / "npu"), q(job / "bench")));
    ASSERT_TRUE(!overview.isEmpty() || overview.wait(120000));
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.isComparing() && window.detailPanel()->hasNode(); }, 60000));
    visitTabs(window);
    EXPECT_TRUE(noLeftovers(&window, "job"));
}

// The graph files of both msprobe versions.
TEST(Leftovers, GraphFilesInChinese)
{
    Chinese zh;
    for (const char* file : { "v26/modelA_tensor_mix/compare_step0_rank.vis.db", "v833/modelA_tensor_mix/compare_step0_rank.vis.db",
                              "v26/modelA_statistics_mix/compare_step0_rank.vis.db" }) {
        SCOPED_TRACE(file);
        MainWindow window;
        showOnALaptop(window, true);
        ASSERT_TRUE(openAndWait(window, q(fixture("msprobe_graph") / file)));
        EXPECT_TRUE(noLeftovers(&window, file));
    }
}

namespace {

/// A few APIs with each of run_ut's verdicts, their dumped outputs judged as their forward.
QList<RunUtApiRow> verdictRows()
{
    using probescope::testing::runUtRow;
    return { runUtRow(0, "Functional.conv2d.0", "pass", "pass", "pass"),
             runUtRow(1, "Torch.matmul.0", "warning", "pass", "warning"),
             runUtRow(2, "Tensor.chunk.0", "pass", "SKIP", "pass"),
             runUtRow(3, "Functional.gelu.0", "error", "error", "error"),
             runUtRow(4, "Torch.ones_like.0", "SKIP", "", "SKIP") };
}

} // namespace

// A run_ut result: the dialog's toggles, summary and verdict cells, and the badges it puts on the window's tree.
TEST(Leftovers, RunUtResultInChinese)
{
    Chinese zh;
    MainWindow window;
    showOnALaptop(window, false);
    ASSERT_TRUE(openAndWait(window, q(fixture("modelA_statistics_mix") / "npu"), q(fixture("modelA_statistics_mix") / "bench")));
    auto dialog = window.createRunUtDialog(
        std::make_unique<probescope::testing::FakeLiveRunUt>(verdictRows(), std::chrono::milliseconds(5)));
    probescope::testing::TempDir tmp;
    ASSERT_TRUE(probescope::testing::runToTheEnd(*dialog, q(tmp.path())));
    QApplication::processEvents();
    ASSERT_GT(dialog->resultView()->model()->rowCount(), 3);
    EXPECT_TRUE(noLeftovers(dialog.get(), "run_ut result"));
    EXPECT_TRUE(noLeftovers(&window, "window with run_ut badges"));
}

// Two distinct texts of one context (one dialog, one panel) never share a translation ("Format:" and "Profile:" were
// both "格式："), a singular and its plural aside; "first failing" is said one way everywhere.
TEST(Leftovers, DistinctTextsHaveDistinctTranslations)
{
    QFile ts(QStringLiteral(PROBESCOPE_TS_FILE));
    ASSERT_TRUE(ts.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&ts);
    QString context;
    QString source;
    std::map<QString, std::map<QString, QString>> byContext; // context -> translation -> source
    const auto norm = [](QString s) {
        static const QRegularExpression mnemonic(QStringLiteral(u"\\s*[(\uff08]&[^&\\s][)\uff09]"));
        s.remove(mnemonic);
        s.remove(QLatin1Char('&'));
        s = s.trimmed();
        while (!s.isEmpty() && QStringLiteral(u":：….").contains(s.back()))
            s.chop(1);
        return s.trimmed();
    };
    const auto normSource = [&](const QString& s) {
        QStringList words = norm(s).toLower().remove(QStringLiteral("'s")).remove(QStringLiteral("the ")).split(QLatin1Char(' '));
        for (QString& w : words)
            if (w.size() > 3 && w.endsWith(QLatin1Char('s')))
                w.chop(1);
        return words.join(QLatin1Char(' '));
    };
    QStringList clashes;
    QStringList firstFailing;
    std::set<QString> contexts;
    QStringList repeatedContexts; // a merge that appended a second block: one block per context keeps the clash check whole
    bool obsolete = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        if (xml.name() == QLatin1String("name")) {
            context = xml.readElementText();
            if (!contexts.insert(context).second)
                repeatedContexts << context;
        }
        else if (xml.name() == QLatin1String("source"))
            source = xml.readElementText();
        else if (xml.name() == QLatin1String("translation")) {
            const auto type = xml.attributes().value(QLatin1String("type"));
            obsolete = type == QLatin1String("vanished") || type == QLatin1String("obsolete");
            const QString translation = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            if (obsolete || translation.isEmpty())
                continue;
            static const QRegularExpression firstFail(QStringLiteral("first (failing|failure)"), QRegularExpression::CaseInsensitiveOption);
            if (firstFail.match(source).hasMatch() && !translation.contains(QStringLiteral("首个不达标")))
                firstFailing << source + " -> " + translation;
            auto& seen = byContext[context];
            const QString key = norm(translation);
            const auto it = seen.find(key);
            if (it == seen.end())
                seen.emplace(key, source);
            else if (normSource(it->second) != normSource(source))
                clashes << context + ": \"" + it->second + "\" and \"" + source + "\" are both \"" + translation + "\"";
        }
    }
    ASSERT_FALSE(xml.hasError()) << xml.errorString().toStdString();
    ASSERT_GT(byContext.size(), 20u);
    EXPECT_TRUE(repeatedContexts.isEmpty()) << "contexts with more than one block: " << repeatedContexts.join(", ").toStdString();
    EXPECT_TRUE(clashes.isEmpty()) << clashes.join('\n').toStdString();
    EXPECT_TRUE(firstFailing.isEmpty()) << "\"first failing\" is 首个不达标 everywhere:\n" << firstFailing.join('\n').toStdString();
}
