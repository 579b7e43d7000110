// SPDX-License-Identifier: Apache-2.0
// probescope-gengraphdb: writes a synthetic msprobe 26.x compare `.vis.db` with N nodes per side, shaped as
// msprobe's graph_visualize writes it (docs/graph.md; ../shared/fixtures/msprobe_graph/README.md): tb_nodes with
// is_distributed, tb_stack, tb_config, msprobe's seven indexes, WAL journal mode; each side in node_order (iterative
// DFS post-order: a module's APIs, then the module, DefaultModel last); NPU rows with precision_index 0/0.5/1 and
// msprobe 26's compare keys in input_data/output_data (about 2.3 KB of JSON per node), bench rows with NULL.
// One API is made failing (precision_index 1) so a reader has a first failing node to find; `--expect` lines printed
// at the end say which (and the counts) for the benchmark to check.
#include "benchargs.h"

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using probescope::bench::optionValue;
using probescope::bench::parseNumber;

int fail(sqlite3* db, const char* what)
{
    std::fprintf(stderr, "probescope-gengraphdb: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    return 1;
}

bool exec(sqlite3* db, const std::string& sql)
{
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::fprintf(stderr, "probescope-gengraphdb: %s: %s\n", sql.substr(0, 60).c_str(), message ? message : "?");
        sqlite3_free(message);
        return false;
    }
    return true;
}

/// One parameter of msprobe 26's compare, as its db stores it: the dump's statistics and the compare columns.
std::string param(const std::string& name, std::uint64_t seed, bool compared, const char* result)
{
    const double base = 0.5 + static_cast<double>(seed % 997) / 1000.0;
    char stats[512];
    std::snprintf(stats, sizeof stats,
                  "\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": \"[4, 16, 32]\", "
                  "\"Max\": \"%.17g\", \"Min\": \"%.17g\", \"Mean\": \"%.17g\", \"Norm\": \"%.17g\", "
                  "\"requires_grad\": \"True\", \"data_name\": \"%s.pt\"",
                  base * 3.2, -base * 3.1, base * 0.01, base * 30.4, name.c_str());
    std::string text = "\"" + name + "\": {" + stats;
    if (compared) {
        text += ", \"Cosine\": \"1.0\", \"EucDist\": \"0.0\", \"MaxAbsErr\": \"0.0\", \"MaxRelativeErr\": \"0.0\", "
                "\"One Thousandth Err Ratio\": \"1.0\", \"Five Thousandths Err Ratio\": \"1.0\", "
                "\"Requires_grad Consistent\": \"True\", \"Result\": \"";
        text += result;
        text += "\", \"Err_message\": \"[]\"";
    }
    return text + "}";
}

} // namespace

int main(int argc, char** argv)
{
    std::uint64_t nodes = 0;
    std::uint64_t modules = 1000;
    std::filesystem::path out;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--nodes") {
            if (!parseNumber(optionValue(argv[0], argc, argv, i), nodes) || nodes < 3) {
                std::fprintf(stderr, "probescope-gengraphdb: --nodes takes a number >= 3\n");
                return 2;
            }
        } else if (a == "--modules") {
            if (!parseNumber(optionValue(argv[0], argc, argv, i), modules) || modules < 1) {
                std::fprintf(stderr, "probescope-gengraphdb: --modules takes a number >= 1\n");
                return 2;
            }
        } else if (a == "--out") {
            out = optionValue(argv[0], argc, argv, i);
        } else if (a == "--help" || a == "-h") {
            std::printf("usage: probescope-gengraphdb --nodes N [--modules M] --out FILE.vis.db\n"
                        "Writes a synthetic msprobe 26.x compare .vis.db with about N nodes per side (M modules of\n"
                        "equal size under DefaultModel), one failing API, a warning and an unmatched API per module.\n");
            return 0;
        } else {
            std::fprintf(stderr, "probescope-gengraphdb: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (nodes == 0 || out.empty()) {
        std::fprintf(stderr, "probescope-gengraphdb: --nodes and --out are required\n");
        return 2;
    }
    // Never replaces a file: the benchmark generates once and reuses.
    std::error_code ec;
    if (std::filesystem::exists(out, ec)) {
        std::fprintf(stderr, "probescope-gengraphdb: %s exists; not replaced\n", out.c_str());
        return 1;
    }
    if (modules > nodes - 1)
        modules = nodes - 1;
    // DefaultModel + modules x (APIs + the module itself).
    const std::uint64_t apisPer = (nodes - 1) / modules - 1;
    const std::uint64_t perSide = 1 + modules * (apisPer + 1);
    const std::uint64_t failModule = modules / 2;
    const std::uint64_t failApi = apisPer / 2;

    const std::filesystem::path tmp = out.string() + ".part";
    std::filesystem::remove(tmp, ec);
    sqlite3* db = nullptr;
    if (sqlite3_open(tmp.c_str(), &db) != SQLITE_OK)
        return fail(db, "open");
    exec(db, "PRAGMA synchronous=OFF");
    exec(db, "PRAGMA journal_mode=MEMORY");
    const bool created = exec(db, "CREATE TABLE tb_nodes (\n    id TEXT PRIMARY KEY,\n    graph_id TEXT NOT NULL,\n"
                                  "    node_order INTEGER NOT NULL,\n    node_name TEXT NOT NULL,\n    node_type TEXT NOT NULL,\n"
                                  "    up_node TEXT,\n    sub_nodes TEXT,\n    precision_index INTEGER,\n    overflow_level TEXT,\n"
                                  "    micro_step_id INTEGER NOT NULL,\n    matched_node_link TEXT,\n    stack_id TEXT,\n"
                                  "    parallel_merge_info TEXT,\n    matched_distributed TEXT,\n    modified INTEGER NOT NULL,\n"
                                  "    input_data TEXT,\n    output_data TEXT,\n    data_source TEXT,\n    dump_data_dir TEXT,\n"
                                  "    step INTEGER NOT NULL,\n    rank INTEGER NOT NULL,\n    is_distributed INTEGER\n);")
        && exec(db, "CREATE TABLE tb_stack (\n    id TEXT PRIMARY KEY,\n    stack_info TEXT\n);")
        && exec(db, "CREATE TABLE tb_config (\n    id TEXT PRIMARY KEY,\n    graph_type TEXT NOT NULL,\n    task TEXT,\n"
                    "    tool_tip TEXT,\n    micro_steps INTEGER,\n    overflow_check INTEGER,\n    node_colors TEXT NOT NULL,\n"
                    "    rank_list TEXT NOT NULL,\n    step_list TEXT NOT NULL\n);")
        && exec(db, "BEGIN");
    if (!created)
        return 1;
    // A few distinct stacks, as a model's layers share their call sites.
    for (int s = 0; s < 8; ++s) {
        const std::string sql = "INSERT INTO tb_stack VALUES ('" + std::to_string(s)
            + "', '[\"File /home/user/model.py, line " + std::to_string(100 + s)
            + ", in forward, x = self.layer(x)\", \"File /usr/lib/python3/site-packages/torch/nn/modules/module.py, line 1736, in _call_impl\"]')";
        if (!exec(db, sql))
            return 1;
    }
    if (!exec(db, "INSERT INTO tb_config VALUES ('1', 'compare', 'all', '{}', 1, 0, "
                  "'{\"#FFFCF3\": {\"value\": [0, 0.3], \"description\": \"pass\", \"accuracy_level\": \"pass\"}, "
                  "\"#FFDC7F\": {\"value\": [0.3, 0.6], \"description\": \"warning\", \"accuracy_level\": \"warning\"}, "
                  "\"#FF704D\": {\"value\": [0.6, 1], \"description\": \"error\", \"accuracy_level\": \"error\"}, "
                  "\"#C7C7C7\": {\"value\": [], \"description\": \"unmatched node\", \"accuracy_level\": \"unmatched node\"}}', "
                  "'[0]', '[0]')"))
        return 1;

    sqlite3_stmt* insert = nullptr;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO tb_nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, 0, ?9, ?10, '{}', '{}', 0, "
                           "?11, ?12, ?13, ?14, 0, 0, 0)",
                           -1, &insert, nullptr)
        != SQLITE_OK)
        return fail(db, "prepare");
    auto moduleName = [](std::uint64_t m) { return "Module.layers." + std::to_string(m) + ".Block.forward.0"; };
    auto apiName = [&](std::uint64_t m, std::uint64_t k) {
        return "Functional.linear." + std::to_string(m * apisPer + k) + ".forward";
    };
    std::uint64_t unmatched = 0;
    for (const bool npu : { true, false }) {
        const std::string source = npu ? "NPU" : "Bench";
        const std::string graphId = source + "_0_0";
        std::int64_t order = 0;
        auto row = [&](const std::string& name, int type, const std::string& up, const std::string& subs, bool matched,
                       const char* precision, const std::string& input, const std::string& output, int stack) {
            const std::string id = graphId + "_" + name;
            sqlite3_bind_text(insert, 1, id.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 2, graphId.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(insert, 3, order++);
            sqlite3_bind_text(insert, 4, name.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 5, std::to_string(type).c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 6, up.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 7, subs.c_str(), -1, SQLITE_TRANSIENT);
            if (npu && precision && matched) {
                const std::string p = precision;
                if (p == "0" || p == "1")
                    sqlite3_bind_int(insert, 8, p == "1");
                else
                    sqlite3_bind_double(insert, 8, std::stod(p));
            } else {
                sqlite3_bind_null(insert, 8);
            }
            const std::string link = matched ? "[\"" + name + "\"]" : "[]";
            sqlite3_bind_text(insert, 9, link.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 10, std::to_string(stack).c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 11, input.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 12, output.c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(insert, 13, source.c_str(), -1, SQLITE_TRANSIENT);
            const std::string dir = "/data/dump_" + std::string(npu ? "npu" : "bench") + "/step0/rank0/dump_tensor_data";
            sqlite3_bind_text(insert, 14, dir.c_str(), -1, SQLITE_TRANSIENT);
            const bool ok = sqlite3_step(insert) == SQLITE_DONE;
            sqlite3_reset(insert);
            return ok;
        };
        std::string rootSubs = "[";
        for (std::uint64_t m = 0; m < modules; ++m) {
            const std::string module = moduleName(m);
            std::string subs = "[";
            const char* worst = "0";
            for (std::uint64_t k = 0; k < apisPer; ++k) {
                const std::string api = apiName(m, k);
                // The last API of each module has no partner on the other side; one API fails, one warns per 100
                // modules.
                const bool matched = k + 1 != apisPer || apisPer == 1;
                const char* p = m == failModule && k == failApi ? "1" : (m % 100 == 7 && k == 3 ? "0.5" : "0");
                if (matched && std::string(p) == "1")
                    worst = "1";
                else if (matched && std::string(p) == "0.5" && std::string(worst) == "0")
                    worst = "0.5";
                const std::uint64_t seed = m * apisPer + k;
                const char* result = std::string(p) == "1" ? "error" : (std::string(p) == "0.5" ? "warning" : "pass");
                const std::string input = "{" + param(api + ".input.0", seed, npu, result) + ", "
                    + param(api + ".input.1", seed + 1, npu, "pass") + "}";
                const std::string output = "{" + param(api + ".output.0", seed + 2, npu, result) + "}";
                if (!row(api, 1, module, "[]", matched, p, input, output, static_cast<int>(seed % 8)))
                    return fail(db, "insert");
                if (npu && !matched)
                    ++unmatched;
                subs += (k ? ", \"" : "\"") + api + "\"";
            }
            subs += "]";
            const std::string input = "{" + param(module + ".input.0", m, npu, "pass") + "}";
            const std::string output = "{" + param(module + ".output.0", m + 1, npu, worst) + "}";
            if (!row(module, 0, "DefaultModel", subs, true, worst, input, output, static_cast<int>(m % 8)))
                return fail(db, "insert");
            rootSubs += (m ? ", \"" : "\"") + module + "\"";
        }
        rootSubs += "]";
        if (!row("DefaultModel", 0, "", rootSubs, true, nullptr, "{}", "{}", 0))
            return fail(db, "insert");
    }
    sqlite3_finalize(insert);
    // msprobe's post_process_db indexes, then WAL as msprobe leaves its files.
    const char* indexes[] = {
        "CREATE INDEX index1 ON tb_nodes (step, rank, data_source, up_node, node_order)",
        "CREATE INDEX index2 ON tb_nodes (step, rank, data_source, node_name)",
        "CREATE INDEX index3 ON tb_nodes (step, rank, data_source, node_order)",
        "CREATE INDEX index4 ON tb_nodes (step, rank, node_order)",
        "CREATE INDEX index5 ON tb_nodes (step, rank, micro_step_id, node_order)",
        "CREATE INDEX index6 ON tb_nodes (step, rank, modified, matched_node_link)",
        "CREATE INDEX index7 ON tb_nodes (is_distributed)",
    };
    for (const char* sql : indexes)
        if (!exec(db, sql))
            return 1;
    if (!exec(db, "COMMIT") || !exec(db, "PRAGMA journal_mode=WAL"))
        return 1;
    if (sqlite3_close(db) != SQLITE_OK)
        return fail(db, "close");
    std::filesystem::rename(tmp, out, ec);
    if (ec) {
        std::fprintf(stderr, "probescope-gengraphdb: cannot rename to %s: %s\n", out.c_str(), ec.message().c_str());
        return 1;
    }
    // What a reader must find: the benchmark checks these against `info` and the window.
    std::printf("nodes per side %llu\nunmatched %llu\nfirst failing %s\n", static_cast<unsigned long long>(perSide),
                static_cast<unsigned long long>(unmatched), apiName(failModule, failApi).c_str());
    return 0;
}
