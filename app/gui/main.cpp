// SPDX-License-Identifier: Apache-2.0
// probescope: the desktop application. Argument parsing and wiring only; everything else lives in ui/.
#include "core/util/utf8text.h"
#include "ui/views/mainwindow.h"
#include "ui/views/scriptedrun.h"
#include "ui/views/setupcheckpage.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

#include <cstdio>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ProbeScope");
    QApplication::setApplicationName("probescope");
    QApplication::setApplicationVersion(PROBESCOPE_VERSION);
    QApplication::setWindowIcon(probescope::ui::applicationIcon());
    // Wayland compositors and docks find the icon and name through the installed desktop entry.
    QGuiApplication::setDesktopFileName(QStringLiteral("probescope"));

    // The language must be known before the help texts below are translated.
    QString language;
    const QStringList raw = QCoreApplication::arguments();
    for (qsizetype i = 1; i < raw.size(); ++i) {
        if (raw[i] == QLatin1String("--lang") && i + 1 < raw.size())
            language = raw[i + 1];
        else if (raw[i].startsWith(QLatin1String("--lang=")))
            language = raw[i].mid(7);
    }
    probescope::ui::installTranslations(app, language);

    QCommandLineParser parser;
    parser.setApplicationDescription(QCoreApplication::translate(
        "main", "Inspect and compare msprobe precision dumps: NPU_DIR BENCH_DIR (any level: dump root, step, "
                "rank, dump.json), or msprobe's compare.json alone."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot("screenshot",
                                        QCoreApplication::translate("main", "Open the pair, wait for the compare, "
                                                                            "write a PNG of the window to FILE, "
                                                                            "print the selected node and exit."),
                                        "FILE");
    const QCommandLineOption select("select",
                                    QCoreApplication::translate("main", "With --screenshot: first-failure (default) "
                                                                        "or a node's full name."),
                                    "first-failure|NODE_NAME", "first-failure");
    const QCommandLineOption pair("pair", QCoreApplication::translate("main", "Which step/rank pair to show first "
                                                                              "(0-based, in step then rank order)."),
                                  "INDEX", "0");
    const QCommandLineOption demo("demo", QCoreApplication::translate("main", "Open the bundled demo pair."));
    const QCommandLineOption languageOption("lang", QCoreApplication::translate("main", "User-interface language for this "
                                                                                  "run: en or zh_CN."),
                                      "LANG");
    // The scripted mode reaches every page (issue 36): the graph view on or off, and the window's size.
    const QCommandLineOption view("view", QCoreApplication::translate("main", "For this run: tree (the tree alone) or "
                                                                             "graph (the graph view beside it)."),
                                  "tree|graph");
    const QCommandLineOption size("size", QCoreApplication::translate("main", "The window's size for this run, "
                                                                             "WIDTHxHEIGHT (1366x768); a window that "
                                                                             "cannot shrink so far stays larger."),
                                  "WxH");
    parser.addOptions({ screenshot, select, pair, demo, languageOption, view, size });
    parser.addPositionalArgument("NPU_DIR", QCoreApplication::translate("main", "NPU dump (or compare.json)"));
    parser.addPositionalArgument("BENCH_DIR", QCoreApplication::translate("main", "bench dump"));
    parser.process(app);

    const QStringList args = parser.positionalArguments();
    if (args.size() > 2) {
        std::fprintf(stderr, "probescope: at most two folders (NPU and bench), got %lld\n",
                     static_cast<long long>(args.size()));
        return 2;
    }
    // Qt holds paths as text: a folder name with bytes that are not UTF-8 would reach the window as another name
    // (U+FFFD in place of the byte) and be "not found". Said plainly instead, naming the argument; probescope-cli
    // takes such paths as they are (issue 25).
    for (int i = 1; i < argc; ++i) {
        if (!probescope::isValidUtf8(argv[i])) {
            std::fprintf(stderr,
                         "probescope: %s: the path is not valid UTF-8 (the byte is shown escaped); the window opens "
                         "UTF-8 paths only: rename the folder, or compare it with probescope-cli, which takes any "
                         "path\n",
                         probescope::backslashReplace(argv[i]).c_str());
            return 1;
        }
    }
    const auto windowSize = probescope::ui::parseWindowSize(parser.value(size));
    if (parser.isSet(size) && !windowSize) {
        std::fprintf(stderr, "probescope: --size %s: expected WIDTHxHEIGHT, for example 1366x768 (each 200-16384)\n",
                     qPrintable(parser.value(size)));
        return 2;
    }
    const QString viewName = parser.value(view);
    if (parser.isSet(view) && viewName != QLatin1String("tree") && viewName != QLatin1String("graph")) {
        std::fprintf(stderr, "probescope: --view %s: expected tree or graph\n", qPrintable(viewName));
        return 2;
    }
    probescope::ui::MainWindow window;
    probescope::ui::ScriptedRun script;
    // Two config_check packs or two checkpoints open the "Check setup" page instead of a compare (issue 35).
    const bool setupCheck = args.size() == 2 && probescope::ui::isSetupCheckPair(args[0], args[1]);
    if (setupCheck && parser.isSet(screenshot)) {
        if (const auto problem = probescope::ui::ScriptedRun::outputProblem(parser.value(screenshot))) {
            std::fprintf(stderr, "probescope: %s\n", qPrintable(*problem));
            return 1;
        }
        window.setQuiet(true);
        auto* page = window.openSetupCheck();
        if (windowSize)
            page->resize(*windowSize);
        script.beginSetupCheck(page, parser.value(screenshot));
        page->open(args[0], args[1]);
        return app.exec();
    }
    if (setupCheck) {
        window.show();
        window.openSetupCheck(args[0], args[1]);
        return app.exec();
    }
    if (parser.isSet(screenshot)) {
        if (args.isEmpty() && !parser.isSet(demo)) {
            std::fprintf(stderr, "probescope: --screenshot needs NPU_DIR BENCH_DIR (or --demo)\n");
            return 2;
        }
        if (const auto problem = probescope::ui::ScriptedRun::outputProblem(parser.value(screenshot))) {
            std::fprintf(stderr, "probescope: %s\n", qPrintable(*problem));
            return 1;
        }
        script.begin(&window, parser.value(screenshot), parser.value(select));
    }
    // For this run only: a scripted run leaves the user's saved choice alone (setQuiet above).
    if (parser.isSet(view))
        window.setGraphViewShown(viewName == QLatin1String("graph"));
    if (windowSize)
        window.resize(*windowSize);
    window.show();
    bool ok = false;
    const int pairIndex = parser.value(pair).toInt(&ok);
    if (parser.isSet(demo))
        window.openDemo();
    else if (!args.isEmpty())
        window.openInputs(args.value(0), args.value(1), ok ? pairIndex : 0);
    return app.exec();
}
