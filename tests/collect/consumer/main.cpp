// SPDX-License-Identifier: Apache-2.0
// Dumps a few aten ops and their backward with the installed library; exits 0 when dump.json is there.
#include <probescope/collect/precisiondebugger.h>

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: consumer DUMP_PATH\n");
        return 2;
    }
    namespace collect = probescope::collect;
    try {
        collect::Options options;
        options.dumpPath = argv[1];
        options.level = collect::Level::L1;
        collect::PrecisionDebugger debugger(options);
        const at::Tensor x = at::ones({ 2, 2 }).requires_grad_();
        debugger.start();
        const at::Tensor y = (x * 3).sum();
        y.backward();
        debugger.stop();
        const auto dump = debugger.rankDir() / "dump.json";
        std::printf("%s: %ju bytes\n", dump.c_str(), static_cast<std::uintmax_t>(std::filesystem::file_size(dump)));
        return std::filesystem::file_size(dump) > 100 ? 0 : 1;
    } catch (const collect::CollectError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
