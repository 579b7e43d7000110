// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/dumppreview.h"

#include "core/compare/pipeline/plan.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/dump/dumplayout.h"
#include "core/session/session.h"
#include "core/util/fileio.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <set>
#include <tuple>

namespace probescope::ui {

namespace fs = std::filesystem;

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }

/// "step0, step1" for a few, "step0 … step99" for many.
QString listed(const QStringList& names)
{
    if (names.size() <= 4)
        return names.join(QStringLiteral(", "));
    return QStringLiteral("%1 … %2").arg(names.front(), names.back());
}

/// `"key": "value"` in the first bytes of a dump.json, value 1 to 40 characters without a quote; read in one pass (the
/// text is input: no regular expression over it, issue 33).
std::optional<QString> headerValue(const QString& head, QLatin1String key)
{
    const QString quoted = QLatin1Char('"') + key + QLatin1Char('"');
    for (qsizetype at = head.indexOf(quoted); at >= 0; at = head.indexOf(quoted, at + 1)) {
        qsizetype i = at + quoted.size();
        while (i < head.size() && head[i].isSpace())
            ++i;
        if (i >= head.size() || head[i] != QLatin1Char(':'))
            continue;
        ++i;
        while (i < head.size() && head[i].isSpace())
            ++i;
        if (i >= head.size() || head[i] != QLatin1Char('"'))
            continue;
        const qsizetype start = i + 1;
        const qsizetype end = head.indexOf(QLatin1Char('"'), start);
        if (end > start && end - start <= 40)
            return head.mid(start, end - start);
    }
    return std::nullopt;
}

/// The first bytes of a dump.json: msprobe writes "task", "level" and "framework" before "data".
QString headerFacts(const fs::path& file)
{
    auto fd = openRegularFile(file);
    if (!fd)
        return {};
    char buffer[1024];
    const ssize_t n = ::read(*fd, buffer, sizeof buffer);
    ::close(*fd);
    if (n <= 0)
        return {};
    const QString head = QString::fromUtf8(buffer, static_cast<qsizetype>(n));
    QStringList facts;
    for (const char* key : { "task", "level", "framework" }) {
        if (const auto value = headerValue(head, QLatin1String(key)))
            facts << QStringLiteral("%1 %2").arg(QLatin1String(key), *value);
    }
    return facts.join(QStringLiteral(", "));
}

QString formatName(dump::DumpFormat format)
{
    switch (format) {
    case dump::DumpFormat::DumpJson:
        return QStringLiteral("msprobe dump.json");
    case dump::DumpFormat::DebugJson:
        return QStringLiteral("msprobe debug.json");
    case dump::DumpFormat::LegacyPkl:
        return QStringLiteral("ptdbg_ascend .pkl");
    }
    return {};
}

} // namespace

DumpPreview previewDump(const QString& path, const ProgressSink* progress)
{
    DumpPreview preview;
    if (path.trimmed().isEmpty())
        return preview;
    dump::DiscoverOptions discover;
    discover.progress = progress;
    auto layout = dump::discoverDump(path.toStdString(), discover);
    if (!layout) {
        // The one discovery refuses two dumps at one (step, rank) place (a folder holding both npu/ and bench/, say):
        // which of them would be compared is a guess. Its message names both files; the lead says it in the user's
        // language.
        preview.problem = toQ(layout.error().format());
        if (layout.error().id == "dump.duplicate-place")
            preview.problem = QCoreApplication::translate("DumpPreview", "%1 holds two dumps at one step and rank:\n%2")
                                  .arg(path, preview.problem);
        return preview;
    }
    for (const Diagnostic& d : layout->diagnostics) {
        if (d.severity == Severity::Error && preview.problem.isEmpty())
            preview.problem = toQ(d.format());
        else if (d.severity != Severity::Error)
            preview.notes << toQ(d.format());
    }
    if (!preview.problem.isEmpty())
        return preview;

    QStringList steps;
    QStringList ranks;
    std::set<std::string> stepSeen;
    std::set<std::string> rankSeen;
    QStringList formats;
    for (const dump::RankLocation& r : layout->ranks) {
        if (!r.stepLabel.empty() && stepSeen.insert(r.stepLabel).second)
            steps << toQ(r.stepLabel);
        const std::string rank = r.rankLabel.empty() ? std::string() : r.rankLabel;
        if (rankSeen.insert(rank).second && !rank.empty())
            ranks << toQ(rank);
        const QString format = formatName(r.format);
        if (!formats.contains(format))
            formats << format;
    }
    QStringList parts;
    if (steps.isEmpty())
        parts << QCoreApplication::translate("DumpPreview", "no step folder");
    else
        parts << (steps.size() == 1 ? QCoreApplication::translate("DumpPreview", "1 step (%1)").arg(steps.front())
                                    : QCoreApplication::translate("DumpPreview", "%1 steps (%2)").arg(steps.size()).arg(listed(steps)));
    if (ranks.isEmpty())
        parts << QCoreApplication::translate("DumpPreview", "no rank folder");
    else
        parts << (ranks.size() == 1 ? QCoreApplication::translate("DumpPreview", "1 rank (%1)").arg(ranks.front())
                                    : QCoreApplication::translate("DumpPreview", "%1 ranks (%2)").arg(ranks.size()).arg(listed(ranks)));
    QString format = formats.join(QStringLiteral(", "));
    const dump::RankLocation& first = layout->ranks.front();
    if (first.format != dump::DumpFormat::LegacyPkl) {
        const QString facts = headerFacts(first.dumpFile);
        if (!facts.isEmpty())
            format += QStringLiteral(" (%1)").arg(facts);
    }
    preview.ok = true;
    if (steps.isEmpty() && ranks.isEmpty()) {
        const int n = static_cast<int>(layout->ranks.size());
        preview.summary = n == 1 ? QCoreApplication::translate("DumpPreview", "Found 1 dump · %1").arg(format)
                                 : QCoreApplication::translate("DumpPreview", "Found %1 dumps · %2").arg(n).arg(format);
    } else {
        preview.summary = QCoreApplication::translate("DumpPreview", "Found %1 × %2 · %3").arg(parts[0], parts[1], format);
    }
    return preview;
}

QString pairProblem(const QString& npu, const QString& bench, const ProgressSink* progress)
{
    QString npuPath = npu;
    QString benchPath = bench;
    if (bench.isEmpty()) {
        // msprobe's compare.json (or ptdbg_ascend's) names the two sides.
        const QFileInfo info(npu);
        if (!info.isFile() || info.suffix() != QLatin1String("json") || info.fileName() == QLatin1String("dump.json")
            || info.fileName() == QLatin1String("debug.json"))
            return {}; // not a pair; the planner says what is missing
        const fs::path file = npu.toStdString();
        if (compare::ptdbg::isPtdbgCompareJson(file)) {
            auto input = compare::ptdbg::readPtdbgCompareJson(file);
            if (!input)
                return toQ(input.error().format());
            npuPath = toQ(input->npuPkl.string());
            benchPath = toQ(input->benchPkl.string());
        } else {
            auto input = compare::readCompareJson(file);
            if (!input)
                return toQ(input.error().format());
            npuPath = toQ(input->npuPath.string());
            benchPath = toQ(input->benchPath.string());
        }
    }
    const DumpPreview n = previewDump(npuPath, progress);
    if (!n.ok)
        return QCoreApplication::translate("DumpPreview", "NPU side: %1").arg(n.problem);
    const DumpPreview b = previewDump(benchPath, progress);
    if (!b.ok)
        return QCoreApplication::translate("DumpPreview", "Bench side: %1").arg(b.problem);
    return {};
}

PairPreview previewPair(const QString& npu, const QString& bench)
{
    PairPreview preview;
    if (const QString problem = pairProblem(npu, bench); !problem.isEmpty()) {
        preview.text = problem;
        return preview;
    }
    auto plan = session::planSession(npu.toStdString(), bench.toStdString());
    if (!plan) {
        preview.text = toQ(plan.error().format());
        return preview;
    }
    QStringList labels;
    for (const session::RankPair& p : plan->pairs)
        labels << toQ(p.label());
    const int n = static_cast<int>(labels.size());
    QString listedPairs = labels.mid(0, 4).join(QStringLiteral(", "));
    if (n > 4)
        listedPairs += QCoreApplication::translate("DumpPreview", " and %1 more").arg(n - 4);
    preview.ok = true;
    preview.text = n == 1 ? QCoreApplication::translate("DumpPreview", "Will compare 1 pair: %1").arg(listedPairs)
                          : QCoreApplication::translate("DumpPreview", "Will compare %1 pairs: %2").arg(n).arg(listedPairs);
    for (const Diagnostic& d : plan->diagnostics)
        preview.notes << toQ(d.format());
    return preview;
}

} // namespace probescope::ui
