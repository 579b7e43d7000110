// SPDX-License-Identifier: Apache-2.0
// The Simplified Chinese translation: the .qm embedded in ProbeScope::uiviews loads, the main window's
// menus and tabs come out in Chinese (at construction and after a LanguageChange), and every message
// of the .ts in the source tree has a translation in the .qm that keeps its placeholders, accelerator
// and HTML tags.
#include "fixtureguard.h"
#include "ui/panels/detailpanel.h"
#include "ui/panels/exportdialog.h"
#include "ui/models/noderowsmodel.h"
#include "ui/panels/runutdialog.h"
#include "ui/panels/settings.h"
#include "ui/panels/settingsdialog.h"
#include "ui/panels/shortcutsdialog.h"
#include "ui/views/mainwindow.h"
#include "ui/views/scriptedrun.h"
#include "ui/panels/filterbar.h"
#include "ui/panels/searchbar.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLibraryInfo>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSet>
#include <QSplitter>
#include <QTabWidget>
#include <QTest>
#include <QTranslator>
#include <QXmlStreamReader>

#include <gtest/gtest.h>

#include <memory>

using probescope::ui::MainWindow;
using probescope::ui::DetailPanel;
using probescope::ui::FilterBar;
using probescope::ui::SearchBar;
using probescope::ui::switchLanguage;

namespace {

const QString kQm = QStringLiteral(":/i18n/probescope_zh_CN.qm");

bool hasCjk(const QString& text)
{
    for (const QChar c : text) {
        if (c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF)
            return true;
    }
    return false;
}

// Installs the Chinese translator for the lifetime of one test and removes it afterwards, so the
// other tests of this binary see English again.
class ChineseTranslation
{
public:
    /// withQt: also Qt's own catalogue (standard buttons), as the application installs it.
    explicit ChineseTranslation(bool withQt = false)
    {
        m_loaded = m_translator.load(kQm);
        if (m_loaded)
            m_installed = QApplication::installTranslator(&m_translator);
        if (withQt
            && m_qt.load(QLocale(QLocale::Chinese, QLocale::China), QStringLiteral("qtbase"), QStringLiteral("_"),
                         QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
            m_qtInstalled = QApplication::installTranslator(&m_qt);
    }
    ~ChineseTranslation()
    {
        if (m_qtInstalled)
            QApplication::removeTranslator(&m_qt);
        if (m_installed)
            QApplication::removeTranslator(&m_translator);
    }
    bool installed() const { return m_installed; }
    const QTranslator& translator() const { return m_translator; }

private:
    QTranslator m_translator;
    QTranslator m_qt;
    bool m_loaded = false;
    bool m_installed = false;
    bool m_qtInstalled = false;
};

QStringList menuTitles(const MainWindow& window)
{
    QStringList titles;
    for (QAction* a : window.menuBar()->actions()) {
        if (a->menu())
            titles << a->menu()->title();
    }
    return titles;
}

QTabWidget* sideTabs(const MainWindow& window)
{
    auto* splitter = window.findChild<QSplitter*>(QStringLiteral("mainSplitter"));
    return splitter ? qobject_cast<QTabWidget*>(splitter->widget(1)) : nullptr;
}

QStringList tabTexts(const QTabWidget* tabs)
{
    QStringList texts;
    for (int i = 0; tabs && i < tabs->count(); ++i)
        texts << tabs->tabText(i);
    return texts;
}

struct TsMessage
{
    QString context;
    QString source;
    QString comment;
    QString translation;
    bool unfinished = false;
    bool obsolete = false; ///< "vanished"/"obsolete": kept by lupdate for a source gone from the code, not in the .qm
    bool numerus = false;
};

// Every <message> of the .ts file (the source of the .qm), read with QXmlStreamReader.
std::vector<TsMessage> readTs(const QString& path, QString* error)
{
    std::vector<TsMessage> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = file.errorString();
        return out;
    }
    QXmlStreamReader xml(&file);
    QString context;
    TsMessage current;
    bool inMessage = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("name") && !inMessage) {
                context = xml.readElementText();
            } else if (name == QLatin1String("message")) {
                inMessage = true;
                current = TsMessage {};
                current.context = context;
                current.numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
            } else if (inMessage && name == QLatin1String("source")) {
                current.source = xml.readElementText();
            } else if (inMessage && name == QLatin1String("comment")) {
                current.comment = xml.readElementText();
            } else if (inMessage && name == QLatin1String("translation")) {
                const auto type = xml.attributes().value(QLatin1String("type"));
                current.unfinished = type == QLatin1String("unfinished");
                current.obsolete = type == QLatin1String("vanished") || type == QLatin1String("obsolete");
                if (current.numerus) {
                    // The first numerusform stands for the message; Chinese has a single form.
                    while (xml.readNextStartElement()) {
                        const QString form = xml.readElementText();
                        if (current.translation.isEmpty())
                            current.translation = form;
                    }
                } else {
                    current.translation = xml.readElementText();
                }
            }
        } else if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
            inMessage = false;
            out.push_back(current);
        }
    }
    if (xml.hasError())
        *error = xml.errorString();
    return out;
}

QSet<QString> placeholders(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("%(\\d+|n|v|m)"));
    QSet<QString> found;
    for (auto it = re.globalMatch(text); it.hasNext();)
        found.insert(it.next().captured(0));
    return found;
}

QStringList htmlTags(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("</?[a-zA-Z][^>]*>"));
    QStringList tags;
    for (auto it = re.globalMatch(text); it.hasNext();)
        tags << it.next().captured(0);
    return tags;
}

// The mnemonic letter of "&File" (F), or a null QChar; "&&" is a literal ampersand.
QChar accelerator(const QString& text)
{
    for (qsizetype i = 0; i + 1 < text.size(); ++i) {
        if (text[i] == QLatin1Char('&')) {
            if (text[i + 1] == QLatin1Char('&')) {
                ++i;
                continue;
            }
            return text[i + 1].toUpper();
        }
    }
    return {};
}

} // namespace

TEST(Translation, EmbeddedQmLoads)
{
    ASSERT_TRUE(QFile::exists(kQm)) << "ProbeScope::uiviews does not embed " << kQm.toStdString();
    QTranslator translator;
    ASSERT_TRUE(translator.load(kQm));
    EXPECT_FALSE(translator.isEmpty());
    EXPECT_EQ(translator.language(), QStringLiteral("zh_CN"));
    EXPECT_EQ(translator.translate("probescope::ui::MainWindow", "&File"), QStringLiteral("文件(&F)"));
}

TEST(Translation, MainWindowMenusAndTabsAreChinese)
{
    ChineseTranslation zh;
    ASSERT_TRUE(zh.installed());
    MainWindow window;

    const QStringList menus = menuTitles(window);
    ASSERT_EQ(menus.size(), 5) << menus.join(u'|').toStdString();
    EXPECT_EQ(menus[0], QStringLiteral("文件(&F)"));
    for (const QString& title : menus) {
        EXPECT_TRUE(hasCjk(title)) << title.toStdString();
        EXPECT_FALSE(accelerator(title).isNull()) << title.toStdString();
    }
    // Every action of every menu (the recent-pairs list aside) is in Chinese too.
    for (QAction* m : window.menuBar()->actions()) {
        for (QAction* a : m->menu()->actions()) {
            if (a->isSeparator() || a->menu())
                continue;
            EXPECT_TRUE(hasCjk(a->text())) << a->text().toStdString();
        }
    }

    const QTabWidget* tabs = sideTabs(window);
    ASSERT_NE(tabs, nullptr);
    const QStringList texts = tabTexts(tabs);
    ASSERT_EQ(texts.size(), 7);
    const char* english[] = { "Details",       "Metric plot", "Across steps/ranks", "Tensors",
                              "Rank overview", "Diagnostics", "Communication ops" };
    for (int i = 0; i < texts.size(); ++i) {
        EXPECT_TRUE(hasCjk(texts[i])) << texts[i].toStdString();
        EXPECT_EQ(texts[i], zh.translator().translate("probescope::ui::MainWindow", english[i]));
    }
    EXPECT_EQ(texts[0], QStringLiteral("详情"));
    // The first-run hint in the status bar.
    EXPECT_TRUE(hasCjk(window.statusLine())) << window.statusLine().toStdString();
}

TEST(Translation, MainWindowRetranslatesOnLanguageChange)
{
    MainWindow window;
    ASSERT_EQ(menuTitles(window).value(0), QStringLiteral("&File"));
    {
        ChineseTranslation zh;
        ASSERT_TRUE(zh.installed());
        // installTranslator posts LanguageChange to every top-level widget.
        EXPECT_TRUE(QTest::qWaitFor([&] { return menuTitles(window).value(0) == QStringLiteral("文件(&F)"); }, 5000));
        EXPECT_EQ(tabTexts(sideTabs(window)).value(3), QStringLiteral("张量"));
    }
    EXPECT_TRUE(QTest::qWaitFor([&] { return menuTitles(window).value(0) == QStringLiteral("&File"); }, 5000));
    EXPECT_EQ(tabTexts(sideTabs(window)).value(0), QStringLiteral("Details"));
}

// Issue 19 item 10: choosing Chinese in the settings applies at once, not after a restart. switchLanguage is
// what the settings dialog's OK calls; the panels around the tree say themselves again.
TEST(Translation, SwitchingTheLanguageAppliesAtOnceToThePanels)
{
    MainWindow window;
    auto* filter = window.findChild<FilterBar*>();
    auto* search = window.findChild<SearchBar*>();
    auto* details = window.findChild<DetailPanel*>();
    ASSERT_TRUE(filter && search && details);
    auto labels = [](QWidget* w) {
        QStringList out;
        for (QLabel* l : w->findChildren<QLabel*>())
            out << l->text();
        return out;
    };
    ASSERT_TRUE(labels(filter).contains("Show:"));
    ASSERT_TRUE(switchLanguage(*qApp, "zh_CN"));
    const QString showZh = QCoreApplication::translate("probescope::ui::FilterBar", "Show:");
    ASSERT_TRUE(hasCjk(showZh)) << "no translation of Show:";
    EXPECT_TRUE(QTest::qWaitFor([&] { return menuTitles(window).value(0) == QStringLiteral("文件(&F)"); }, 5000));
    EXPECT_TRUE(labels(filter).contains(showZh)) << labels(filter).join('|').toStdString();
    EXPECT_TRUE(hasCjk(search->findChild<QLineEdit*>()->placeholderText()));
    auto* stacks = details->findChild<QTabWidget*>();
    ASSERT_TRUE(stacks);
    EXPECT_TRUE(hasCjk(stacks->tabText(2))) << stacks->tabText(2).toStdString();
    ASSERT_TRUE(switchLanguage(*qApp, "en"));
    EXPECT_TRUE(QTest::qWaitFor([&] { return menuTitles(window).value(0) == QStringLiteral("&File"); }, 5000));
    EXPECT_TRUE(labels(filter).contains("Show:"));
    EXPECT_EQ(stacks->tabText(2), "Data files");
}

// The dialogs and menus laid out with the Chinese texts stay a sensible size; their pictures are written
// next to the test binary (zh_CN-*.png) for a human look.
TEST(Translation, DialogsAndMenusFitWithChineseTexts)
{
    ChineseTranslation zh(true);
    ASSERT_TRUE(zh.installed());
    MainWindow window;
    const QDir out(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR));
    int m = 0;
    for (QAction* a : window.menuBar()->actions()) {
        QMenu* menu = a->menu();
        menu->adjustSize();
        EXPECT_LE(menu->sizeHint().width(), 500) << menu->title().toStdString();
        EXPECT_TRUE(menu->grab().save(out.filePath(QStringLiteral("zh_CN-menu%1.png").arg(m++))));
    }
    const probescope::ui::Settings settings;
    std::vector<std::pair<const char*, std::unique_ptr<QDialog>>> dialogs;
    dialogs.emplace_back("settings", std::make_unique<probescope::ui::SettingsDialog>(settings, &window));
    dialogs.emplace_back("export", std::make_unique<probescope::ui::ExportDialog>(nullptr, settings, &window));
    dialogs.emplace_back("run_ut", std::make_unique<probescope::ui::RunUtDialog>(&window));
    dialogs.emplace_back("shortcuts", std::make_unique<probescope::ui::ShortcutsDialog>(window.actions(), &window));
    for (auto& [name, dialog] : dialogs) {
        dialog->show();
        EXPECT_TRUE(hasCjk(dialog->windowTitle())) << name << ": " << dialog->windowTitle().toStdString();
        const QSize hint = dialog->sizeHint();
        EXPECT_LE(hint.width(), 900) << name;
        EXPECT_LE(hint.height(), 900) << name;
        EXPECT_TRUE(dialog->grab().save(out.filePath(QStringLiteral("zh_CN-%1.png").arg(QLatin1String(name)))));
        dialog->hide();
    }
}

// A compare of the bundled demo in Chinese: the detail panel speaks Chinese, and every tab of the
// right-hand side is grabbed (zh_CN-tab*.png) with the first failing node's output in the inspector.
TEST(Translation, DemoCompareInChinese)
{
    if (MainWindow::demoDir().isEmpty())
        PROBESCOPE_FIXTURE_MISSING("the demo pair (resources/demo)");
    ChineseTranslation zh(true);
    ASSERT_TRUE(zh.installed());
    MainWindow window;
    window.resize(1400, 860);
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    window.openDemo();
    ASSERT_TRUE(finished.wait(120000) || !finished.isEmpty());
    ASSERT_TRUE(finished.takeFirst().at(0).toBool());
    ASSERT_TRUE(window.detailPanel()->hasNode());
    EXPECT_TRUE(hasCjk(window.statusLine())) << window.statusLine().toStdString();
    const QString details = window.detailPanel()->detailsText();
    EXPECT_TRUE(details.contains(QStringLiteral("节点："))) << details.toStdString();
    const auto* rows = window.detailPanel()->rowsModel();
    ASSERT_GT(rows->columnCount(), 2);
    EXPECT_EQ(rows->headerData(1, Qt::Horizontal).toString(), QStringLiteral("判定"));
    // The failing output row opens in the tensor inspector.
    int failing = rows->rowCount() - 1;
    emit window.detailPanel()->rowActivated(rows->tableRow(failing));
    QTabWidget* tabs = sideTabs(window);
    ASSERT_NE(tabs, nullptr);
    const QDir out(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR));
    for (int i = 0; i < tabs->count(); ++i) {
        tabs->setCurrentIndex(i);
        // Loading happens off the GUI thread: give the inspector and trend plot a moment.
        QTest::qWait(i == 2 || i == 3 ? 1500 : 200);
        EXPECT_TRUE(window.grab().save(out.filePath(QStringLiteral("zh_CN-tab%1.png").arg(i))));
    }
}

TEST(Translation, EveryTsMessageIsTranslatedInTheQm)
{
    QString error;
    const std::vector<TsMessage> messages = readTs(QStringLiteral(PROBESCOPE_TS_FILE), &error);
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();

    QTranslator translator;
    ASSERT_TRUE(translator.load(kQm));
    QSet<QString> contexts;
    int cjk = 0;
    int live = 0;
    for (const TsMessage& m : messages) {
        if (m.obsolete)
            continue;
        ++live;
        contexts.insert(m.context);
        const std::string where = m.context.toStdString() + " / \"" + m.source.toStdString() + "\"";
        EXPECT_FALSE(m.unfinished) << "unfinished in the .ts: " << where;
        const QByteArray context = m.context.toUtf8();
        const QByteArray source = m.source.toUtf8();
        const QByteArray comment = m.comment.toUtf8();
        const QString qm = translator.translate(context.constData(), source.constData(),
                                                m.comment.isEmpty() ? nullptr : comment.constData(), m.numerus ? 1 : -1);
        EXPECT_FALSE(qm.isEmpty()) << "no translation in the .qm: " << where;
        if (qm.isEmpty())
            continue;
        EXPECT_EQ(qm, m.translation) << "the .qm is older than the .ts: " << where;
        EXPECT_EQ(placeholders(qm), placeholders(m.source)) << where << " -> " << qm.toStdString();
        EXPECT_EQ(htmlTags(qm), htmlTags(m.source)) << where << " -> " << qm.toStdString();
        const QChar key = accelerator(m.source);
        if (!key.isNull()) {
            EXPECT_TRUE(qm.contains(QStringLiteral("(&") + key + QLatin1Char(')'))) << where << " -> " << qm.toStdString();
        }
        cjk += hasCjk(qm) ? 1 : 0;
    }
    // Most messages are prose; only msprobe column names and API names stay in English.
    EXPECT_GT(live, 300);
    EXPECT_GT(cjk, live * 8 / 10);
    for (const char* sample : { "probescope::ui::MainWindow", "probescope::ui::DetailPanel", "probescope::ui::FilterBar",
                                "probescope::ui::LegendWidget", "probescope::ui::NodeRowsModel",
                                "probescope::ui::SettingsDialog", "probescope::ui::TensorInspector", "StatusPalette" })
        EXPECT_TRUE(contexts.contains(QString::fromLatin1(sample))) << sample;
}

TEST(Translation, MsprobeVocabulary)
{
    QTranslator translator;
    ASSERT_TRUE(translator.load(kQm));
    auto zh = [&](const char* context, const char* source) { return translator.translate(context, source); };
    // The legend texts of msprobe's visualization (gui-anchors §b.1).
    EXPECT_TRUE(zh("probescope::ui::LegendWidget",
                   "Statistics: statistic error; the darker the colour, the bigger the deviation.")
                    .contains(QStringLiteral("统计量误差，颜色越深偏差越大")));
    EXPECT_TRUE(zh("probescope::ui::LegendWidget",
                   "md5: error when any input or output md5 differs; pass when all are identical.")
                    .contains(QStringLiteral("任意输入输出 md5 不同")));
    // msprobe's column names stay as msprobe writes them.
    EXPECT_EQ(zh("probescope::ui::CompareTreeModel", "Cosine"), QStringLiteral("Cosine"));
    EXPECT_EQ(zh("probescope::ui::CompareTreeModel", "MaxAbsErr"), QStringLiteral("MaxAbsErr"));
    EXPECT_EQ(zh("probescope::ui::CompareTreeModel", "NormRelErr"), QStringLiteral("NormRelErr"));
    // bench is 标杆 throughout.
    EXPECT_EQ(zh("probescope::ui::DetailPanel", "Bench stack"), QStringLiteral("标杆堆栈"));
    EXPECT_EQ(zh("probescope::ui::DetailPanel", "accuracy not reached"), QStringLiteral("精度不达标"));
    EXPECT_EQ(zh("probescope::ui::NodeRowsModel", "Verdict"), QStringLiteral("判定"));
    EXPECT_EQ(zh("StatusPalette", "Unmatched"), QStringLiteral("未匹配"));
}
