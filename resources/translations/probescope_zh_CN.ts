<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>QObject</name>
    <message>
        <location filename="../../ui/inspect/tensorinspector.cpp" line="+102"/>
        <source>Cannot read %1: %2 [%3]</source>
        <translation>无法读取 %1：%2 [%3]</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Cannot show %1: %2</source>
        <translation>无法显示 %1：%2</translation>
    </message>
</context>
<context>
    <name>RunUt</name>
    <message>
        <location filename="../../ui/runutplugin/runutbackend.cpp" line="+25"/>
        <source>The run_ut API accuracy checker is not available in this build yet.</source>
        <translation>此版本尚未提供 run_ut 精度预检工具。</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>The run_ut plugin could not be loaded:
%1</source>
        <translation>run_ut 插件无法加载：
%1</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>%1 is not a folder.</source>
        <translation>%1 不是文件夹。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Cannot copy %1 into %2: %3</source>
        <translation>无法将 %1 复制到 %2：%3</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Choose the dump.json to replay.</source>
        <translation>请选择要回放的 dump.json。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 is not a file.</source>
        <translation>%1 不是文件。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Choose an output folder.</source>
        <translation>请选择输出目录。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Unknown profile %1 (msprobe-1.2 or msprobe-26).</source>
        <translation>未知的配置 %1（msprobe-1.2 或 msprobe-26）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 is in both the white list and the black list.</source>
        <translation>%1 同时在白名单和黑名单中。</translation>
    </message>
    <message>
        <location filename="../../ui/runutplugin/runutengine.cpp" line="+88"/>
        <source>%1 APIs: %2 pass, %3 warning, %4 error, %5 SKIP in %6 s</source>
        <translation>%1 个 API：%2 个通过，%3 个警告，%4 个错误，%5 个跳过，用时 %6 秒</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>First failing API: %1</source>
        <translation>首个不达标的 API：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>First API whose dumped outputs fail against the bench: %1</source>
        <translation>首个 dump 输出与标杆比对不达标的 API：%1</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <location filename="../../ui/panels/settings.cpp" line="+97"/>
        <source>Band limits must be numbers.</source>
        <translation>区间边界必须是数字。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The warning band must start above 0.</source>
        <translation>警告区间的起点必须大于 0。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The error band must start above the warning band.</source>
        <translation>错误区间的起点必须大于警告区间的起点。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The error band must start at 1 or below.</source>
        <translation>错误区间的起点不能大于 1。</translation>
    </message>
    <message>
        <location line="+72"/>
        <source>At most %1 compare threads.</source>
        <translation>比对线程数最多为 %1。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Data mapping (-dm) needs a mapping file.</source>
        <translation>数据映射（-dm）需要一个映射文件。</translation>
    </message>
</context>
<context>
    <name>StatusPalette</name>
    <message>
        <location filename="../../ui/models/statuspalette.cpp" line="+174"/>
        <source>No data</source>
        <translation>无数据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Pending</source>
        <translation>待计算</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Unmatched</source>
        <translation>未匹配</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Error</source>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../../app/gui/main.cpp" line="+37"/>
        <source>Inspect and compare msprobe precision dumps: NPU_DIR BENCH_DIR (any level: dump root, step, rank, dump.json), or msprobe&apos;s compare.json alone.</source>
        <translation>查看并比对 msprobe 精度 dump 数据：NPU_DIR BENCH_DIR（任意层级：dump 根目录、step、rank、dump.json），或单独一个 msprobe 的 compare.json。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Open the pair, wait for the compare, write a PNG of the window to FILE, print the selected node and exit.</source>
        <translation>打开这对数据，等待比对完成，将窗口截图以 PNG 格式写入 FILE，打印选中的节点后退出。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>With --screenshot: first-failure (default) or a node&apos;s full name.</source>
        <translation>与 --screenshot 一起使用：first-failure（默认）或节点全名。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Which step/rank pair to show first (0-based, in step then rank order).</source>
        <translation>首先显示哪一对 step/rank（从 0 开始，先按 step 再按 rank 排序）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open the bundled demo pair.</source>
        <translation>打开自带的示例数据。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>User-interface language for this run: en or zh_CN.</source>
        <translation>本次运行的界面语言：en 或 zh_CN。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>NPU dump (or compare.json)</source>
        <translation>NPU dump 数据（或 compare.json）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bench dump</source>
        <translation>标杆 dump 数据</translation>
    </message>
    <message>
        <source>For this run: tree (the tree alone) or graph (the graph view beside it).</source>
        <translation>仅本次运行：tree（只显示树）或 graph（在树旁显示图视图）。</translation>
    </message>
    <message>
        <source>The window&apos;s size for this run, WIDTHxHEIGHT (1366x768); a window that cannot shrink so far stays larger.</source>
        <translation>本次运行的窗口大小，宽x高（如 1366x768）；窗口无法缩到这么小时保持更大。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::CompareController</name>
    <message>
        <location filename="../../ui/jobs/comparecontroller.cpp" line="+24"/>
        <source>Loading dumps</source>
        <translation>加载 dump 数据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Comparing</source>
        <translation>比对中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Judging nodes</source>
        <translation>判定节点</translation>
    </message>
    <message>
        <location line="+258"/>
        <source>the analysis failed</source>
        <translation>分析失败</translation>
    </message>
</context>
<context>
    <name>probescope::ui::CompareTreeModel</name>
    <message>
        <location filename="../../ui/models/comparetreemodel.cpp" line="+401"/>
        <source>%1 · %2 failing below</source>
        <translation>%1 · 下层 %2 个不达标</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>Status: %1</source>
        <translation>状态：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Worst below: %1</source>
        <translation>下层最差：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Failing below: %1</source>
        <translation>下层不达标：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Colour band: %1</source>
        <translation>颜色区间：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Execution index: %1</source>
        <translation>执行序号：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>(parent inferred)</source>
        <translation>（父节点为推断）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+57"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Failing below</source>
        <translation>下层不达标</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cosine</source>
        <translation>Cosine</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Max diff</source>
        <translation>Max diff</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MaxAbsErr</source>
        <translation>MaxAbsErr</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MaxRelErr</source>
        <translation>MaxRelErr</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NormRelErr</source>
        <translation>NormRelErr</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The node&apos;s own verdict (its inputs and outputs), and how many nodes below it fail</source>
        <translation>节点自身的判定（依据其输入和输出），以及其下层有多少个节点不达标</translation>
    </message>
    <message numerus="yes">
        <source>%1 · %n with NaN/Inf below</source>
        <translation>
            <numerusform>%1 · 下层 %n 个含 NaN/Inf</numerusform>
        </translation>
    </message>
    <message>
        <source>With NaN/Inf below: %1</source>
        <translation>下层含 NaN/Inf：%1</translation>
    </message>
    <message>
        <source>The node's own state in this run: whether its dumped inputs or outputs hold a NaN/Inf, and how many nodes below it do</source>
        <translation>节点在本次运行中的自身状态：其 dump 的输入或输出是否含 NaN/Inf，以及下层有多少节点含 NaN/Inf</translation>
    </message>
</context>
<context>
    <name>probescope::ui::DetailPanel</name>
    <message>
        <source>Double-click a column to open its tensors in the inspector</source>
        <translation>双击一列，在张量检查器中打开其张量</translation>
    </message>
    <message>
        <location filename="../../ui/panels/detailpanel.cpp" line="+42"/>
        <source>API</source>
        <translation>API</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Parameter gradients</source>
        <translation>参数梯度</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Debug value</source>
        <translation>调试值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>API (ptdbg_ascend)</source>
        <translation>API（ptdbg_ascend）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Unknown kind</source>
        <translation>未知类型</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no direction</source>
        <translation>无方向</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>Select a node to see its rows, reasons and call stack.</source>
        <translation>选择一个节点，查看其比对行、原因和调用栈。</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Copy details</source>
        <translation>复制详情</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the node, its reasons, rows and stacks as plain text</source>
        <translation>以纯文本复制节点、原因、比对行和堆栈</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Double-click a row to open its tensors in the inspector</source>
        <translation>双击一行，在张量查看器中打开其张量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>NPU stack</source>
        <translation>NPU 堆栈</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench stack</source>
        <translation>标杆堆栈</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Data files</source>
        <translation>数据文件</translation>
    </message>
    <message numerus="yes">
        <location line="+83"/>
        <source>%n row(s)</source>
        <translation>
            <numerusform>%n 行</numerusform>
        </translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 · %2 · execution #%3 · %4 · %5</source>
        <translation>%1 · %2 · 执行序号 #%3 · %4 · %5</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 · subtree worst: %2 · %3 failing below</source>
        <translation>%1 · 子树最差：%2 · 下层 %3 个不达标</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>no bench counterpart</source>
        <translation>无对应的标杆数据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>md5 differs (NPU %1, bench %2)</source>
        <translation>md5 不同（NPU %1，标杆 %2）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>accuracy not reached</source>
        <translation>精度不达标</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>highlighted red by msprobe&apos;s rules</source>
        <translation>按 msprobe 规则标红</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>highlighted yellow by msprobe&apos;s rules</source>
        <translation>按 msprobe 规则标黄</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>First failing node in execution order: its outputs fail while its inputs pass.</source>
        <translation>按执行顺序的首个不达标节点：其输出不达标，而输入达标。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First node with failing rows; its inputs already differ, so the runs diverged before this dump.</source>
        <translation>首个含不达标行的节点；其输入已有差异，说明两次运行在本次 dump 之前就已出现偏差。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No failing rows of its own; see the failing nodes below it.</source>
        <translation>自身没有不达标的行；请查看其下层的不达标节点。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No failing rows.</source>
        <translation>没有不达标的行。</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>The %1 dump has no stack.json.</source>
        <translation>%1 dump 数据中没有 stack.json。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>stack.json has no frames for %1.</source>
        <translation>stack.json 中没有 %1 的调用栈。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>NPU</source>
        <translation>NPU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bench</source>
        <translation>标杆</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>  NPU:   %1</source>
        <translation>  NPU：%1</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+1"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>  bench: %1</source>
        <translation>  标杆：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No data files (statistics or md5 dump).</source>
        <translation>没有数据文件（统计量或 md5 模式的 dump）。</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>Node: %1</source>
        <translation>节点：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Status: %1</source>
        <translation>状态：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reasons:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Rows:</source>
        <translation>比对行：</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>NPU stack:</source>
        <translation>NPU 堆栈：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench stack:</source>
        <translation>标杆堆栈：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Data files:</source>
        <translation>数据文件：</translation>
    </message>
    <message>
        <source>Not the first failure: it runs after the first failing node %1 (#%2).</source>
        <translation>不是首个不达标节点：它在首个不达标节点 %1（#%2）之后执行。</translation>
    </message>
    <message>
        <source>Not counted as the first failure: its inputs fail too, so the difference came in before it.</source>
        <translation>未算作首个不达标节点：它的输入也不达标，偏差在它之前就已出现。</translation>
    </message>
    <message>
        <source>Not counted as the first failure: only its inputs fail; its outputs match.</source>
        <translation>未算作首个不达标节点：只有它的输入不达标，输出一致。</translation>
    </message>
    <message>
        <source>Not counted as the first failure: the first failing node is the earliest whose outputs fail while its inputs pass.</source>
        <translation>未算作首个不达标节点：首个不达标节点是最早的输出不达标而输入达标的节点。</translation>
    </message>
    <message>
        <source>Its failing rows have Cosine 1 and MaxAbsErr 0: NPU and bench agree there (for example −inf on both sides), which msprobe&apos;s rules still mark.</source>
        <translation>它的不达标行 Cosine 为 1、MaxAbsErr 为 0：NPU 与标杆在此一致（例如两侧都是 −inf），但 msprobe 的规则仍会标记。</translation>
    </message>
    <message numerus="yes">
        <source>%1 · %n node(s) below with NaN/Inf</source>
        <translation>
            <numerusform>%1 · 下层 %n 个节点含 NaN/Inf</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>probescope::ui::DiagnosticsModel</name>
    <message>
        <location filename="../../ui/models/diagnosticsmodel.cpp" line="+68"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>info</source>
        <translation>信息</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Severity</source>
        <translation>级别</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Location</source>
        <translation>位置</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Id</source>
        <translation>标识</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Message</source>
        <translation>消息</translation>
    </message>
</context>
<context>
    <name>probescope::ui::ExportDialog</name>
    <message>
        <location filename="../../ui/panels/exportdialog.cpp" line="+105"/>
        <source>Export comparison CSV</source>
        <translation>导出比对结果 CSV</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Writes msprobe&apos;s compare_result file for %1 (never replacing an existing file).</source>
        <translation>为 %1 写出 msprobe 的 compare_result 文件（不会覆盖已有文件）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No compared pair is open.</source>
        <translation>没有打开已比对的数据。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Output folder:</source>
        <translation>输出目录：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>msprobe 1.2 (default)</source>
        <translation>msprobe 1.2（默认）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>msprobe 26</source>
        <translation>msprobe 26</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Profile:</source>
        <translation>兼容配置：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Also write the XLSX workbook</source>
        <translation>同时写出 XLSX 工作簿</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>NPU stack column (-s)</source>
        <translation>NPU 堆栈列（-s）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Fuzzy matching (-f)</source>
        <translation>模糊匹配（-f）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%v of %m tensor pairs</source>
        <translation>%v / %m 个张量对</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The written files are listed here.</source>
        <translation>写出的文件将列在此处。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel export</source>
        <translation>取消导出</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>The NPU dump has no stack.json</source>
        <translation>NPU dump 数据中没有 stack.json</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Export into folder</source>
        <translation>导出到目录</translation>
    </message>
    <message>
        <location line="+91"/>
        <source>Nothing was written: no row matched (msprobe writes no file then).</source>
        <translation>未写出任何文件：没有匹配的行（此时 msprobe 也不写文件）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Written:</source>
        <translation>已写出：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancelled; no file was written.</source>
        <translation>已取消；未写出任何文件。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export failed: %1</source>
        <translation>导出失败：%1</translation>
    </message>
    <message>
        <source>compare_result CSV (msprobe compare)</source>
        <translation>compare_result CSV（msprobe compare）</translation>
    </message>
    <message>
        <source>Graph .vis.db, msprobe 26 (graph_visualize)</source>
        <translation>图 .vis.db，msprobe 26（graph_visualize）</translation>
    </message>
    <message>
        <source>Graph .vis.db, msprobe 8.3 (graph)</source>
        <translation>图 .vis.db，msprobe 8.3（graph）</translation>
    </message>
    <message>
        <source>A .vis.db opens in tb_graph_ascend and in ProbeScope (File → Open graph file).</source>
        <translation>.vis.db 可在 tb_graph_ascend 和 ProbeScope（文件 → 打开图文件）中打开。</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
</context>
<context>
    <name>probescope::ui::FilterBar</name>
    <message>
        <source>%1 nodes are shown; click to hide them</source>
        <translation>正在显示“%1”节点；点击以隐藏</translation>
    </message>
    <message>
        <source>%1 nodes are hidden; click to show them</source>
        <translation>已隐藏“%1”节点；点击以显示</translation>
    </message>
    <message>
        <source>shown</source>
        <translation>显示中</translation>
    </message>
    <message>
        <source>hidden</source>
        <translation>已隐藏</translation>
    </message>
    <message>
        <location filename="../../ui/panels/filterbar.cpp" line="+38"/>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Show nodes whose status is %1</source>
        <translation>显示状态为“%1”的节点</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Direction:</source>
        <translation>方向：</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+6"/>
        <source>All</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>Forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Kind:</source>
        <translation>类型：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Modules</source>
        <translation>模块</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>APIs</source>
        <translation>API</translation>
    </message>
    <message>
        <location line="+67"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
</context>
<context>
    <name>probescope::ui::FreeBenchmarkModel</name>
    <message>
        <location filename="../../ui/models/freebenchmodel.cpp" line="+89"/>
        <source>sign flip</source>
        <translation>符号翻转</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>%1:%2</source>
        <translation>%1:%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The perturbed output has the opposite sign of the original somewhere.</source>
        <translation>扰动后的输出在某处与原始输出符号相反。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No max_rel: a to_cpu check or an integer output, judged without a ratio.</source>
        <translation>无 max_rel：to_cpu 检查或整数输出，不按比值判定。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Largest relative change of the output under perturbation (ratio − 1)</source>
        <translation>扰动前后输出的最大相对误差（比值 − 1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The dtype&apos;s relative-error threshold: float16 0.002, bfloat16 0.004, others 0.0002; no_change 0</source>
        <translation>该 dtype 的相对误差阈值：float16 0.002，bfloat16 0.004，其他 0.0002；no_change 为 0</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>max_rel divided by the threshold</source>
        <translation>max_rel 除以阈值</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Step</source>
        <translation>步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rank</source>
        <translation>Rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>API</source>
        <translation>API</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Perturbation</source>
        <translation>扰动因子</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Threshold</source>
        <translation>阈值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Over threshold</source>
        <translation>超出阈值倍数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>dtype</source>
        <translation>dtype</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Shape</source>
        <translation>Shape</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Output index</source>
        <translation>输出索引</translation>
    </message>
</context>
<context>
    <name>probescope::ui::FreeBenchmarkPanel</name>
    <message>
        <location filename="../../ui/inspect/freebenchpanel.cpp" line="+66"/>
        <source>Filter APIs (e.g. gelu)</source>
        <translation>筛选 API（例如 gelu）</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>API</source>
        <translation>API</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Log scale</source>
        <translation>对数坐标</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>step (no point: not flagged in that step)</source>
        <translation>step（无点：该 step 未检出）</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>sign flip / inf (off the scale)</source>
        <translation>符号翻转 / inf（超出坐标范围）</translation>
    </message>
    <message>
        <location line="+61"/>
        <source>%1 (sign flip)</source>
        <translation>%1（符号翻转）</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>No free benchmark results loaded.</source>
        <translation>未加载无标杆比对结果。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No free_benchmark.csv found.</source>
        <translation>未找到 free_benchmark.csv。</translation>
    </message>
    <message numerus="yes">
        <location line="+9"/>
        <source>%n free_benchmark.csv file(s)</source>
        <translation>
            <numerusform>%n 个 free_benchmark.csv 文件</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No API exceeded its threshold: %1 without rows.</source>
        <translation>没有 API 超出阈值：%1 中没有数据行。</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%1 flagged rows of %2 APIs in %3 (steps %4–%5, %n rank(s)).</source>
        <translation>
            <numerusform>%3 中共 %1 行精度风险结果，涉及 %2 个 API（step %4–%5，%n 个 rank）。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+9"/>
        <source>%n line(s) could not be read (see the tooltip).</source>
        <translation>
            <numerusform>%n 行无法读取（见提示）。</numerusform>
        </translation>
    </message>
    <message>
        <location line="+7"/>
        <source>… and %1 more</source>
        <translation>…… 另有 %1 条</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>Choose a row to plot its API across steps.</source>
        <translation>选择一行，绘制该 API 在各 step 的结果。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No flagged API to plot.</source>
        <translation>没有可绘制的精度风险 API。</translation>
    </message>
    <message>
        <location line="+91"/>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>threshold %1 (%2)</source>
        <translation>阈值 %1（%2）</translation>
    </message>
    <message numerus="yes">
        <location line="+6"/>
        <source>%n row(s) without max_rel (to_cpu or integer output) not drawn</source>
        <translation>
            <numerusform>%n 行没有 max_rel（to_cpu 或整数输出），未绘制</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n row(s) with max_rel 0 not drawn on the log scale</source>
        <translation>
            <numerusform>%n 行 max_rel 为 0，无法在对数坐标上绘制</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no_change&apos;s threshold 0 cannot be drawn on the log scale</source>
        <translation>no_change 的阈值 0 无法在对数坐标上绘制</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: max_rel per step</source>
        <translation>%1：各 step 的 max_rel</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Nothing to draw for %1.</source>
        <translation>%1 没有可绘制的数据。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::LegendWidget</name>
    <message>
        <location filename="../../ui/panels/legendwidget.cpp" line="+54"/>
        <source>Statistics: statistic error; the darker the colour, the bigger the deviation.</source>
        <translation>统计量：统计量误差，颜色越深偏差越大。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Real data: tensor error (cosine, error ratios, max errors); the darker the colour, the bigger the error.</source>
        <translation>真实数据：tensor 误差（余弦相似度、误差占比、最大误差），颜色越深误差越大。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>md5: error when any input or output md5 differs; pass when all are identical.</source>
        <translation>md5：任意输入输出 md5 不同为错误，全部相同为通过。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Colours follow the precision index (0 = same, 1 = worst).</source>
        <translation>颜色按精度指数着色（0 = 一致，1 = 最差）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Colours follow msprobe&apos;s rules.</source>
        <translation>颜色按 msprobe 规则着色。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 — index below %2</source>
        <translation>%1 — 指数低于 %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — index %2 to below %3</source>
        <translation>%1 — 指数 %2 至低于 %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — index %2 and above</source>
        <translation>%1 — 指数 %2 及以上</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — no bench counterpart</source>
        <translation>%1 — 无对应的标杆数据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — metrics not computed yet</source>
        <translation>%1 — 指标尚未计算</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — no rows</source>
        <translation>%1 — 无比对行</translation>
    </message>
</context>
<context>
    <name>probescope::ui::LoadProblemBanner</name>
    <message>
        <location filename="../../ui/panels/loadproblembanner.cpp" line="+76"/>
        <source>Show diagnostics</source>
        <translation>查看诊断信息</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hide this message</source>
        <translation>隐藏此消息</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>This pair was loaded with problems; what is shown may be incomplete. %1: %2</source>
        <translation>加载这对数据时出现问题，显示的内容可能不完整。%1：%2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>(%1 problems in all)</source>
        <translation>（共 %1 个问题）</translation>
    </message>
</context>
<context>
    <name>probescope::ui::MainWindow</name>
    <message>
        <source>%1 is hidden by the filters; its details are closed.</source>
        <translation>%1 被筛选条件隐藏，其详情已关闭。</translation>
    </message>
    <message>
        <source>Filters cleared to show %1, which they hid.</source>
        <translation>已清除筛选条件，以显示被其隐藏的 %1。</translation>
    </message>
    <message>
        <location filename="../../ui/views/mainwindow.cpp" line="+69"/>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <location line="+267"/>
        <source>ProbeScope</source>
        <translation>ProbeScope</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ProbeScope — %1 ↔ %2</source>
        <translation>ProbeScope — %1 ↔ %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Recent pairs</source>
        <translation>最近打开</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Go</source>
        <translation>转到(&amp;G)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Tools</source>
        <translation>工具(&amp;T)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open &amp;bench dump…</source>
        <translation>打开标杆 dump(&amp;B)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open compare.&amp;json…</source>
        <translation>打开 compare.json(&amp;J)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Export comparison CSV…</source>
        <translation>导出比对结果 CSV(&amp;E)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Expand all</source>
        <translation>全部展开(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Collapse all</source>
        <translation>全部折叠(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;First failing node</source>
        <translation>首个不达标节点(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Next failing node</source>
        <translation>下一个不达标节点(&amp;N)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Previous failing node</source>
        <translation>上一个不达标节点(&amp;P)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Find…</source>
        <translation>查找(&amp;F)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Cancel compare</source>
        <translation>取消比对(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run &amp;run_ut…</source>
        <translation>运行 run_ut(&amp;R)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open &amp;demo</source>
        <translation>打开示例(&amp;D)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Keyboard shortcuts</source>
        <translation>快捷键(&amp;K)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About ProbeScope</source>
        <translation>关于 ProbeScope(&amp;A)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compare again</source>
        <translation>重新比对</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Metric plot</source>
        <translation>指标曲线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Across steps/ranks</source>
        <translation>跨 step/rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensors</source>
        <translation>张量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rank overview</source>
        <translation>各卡总览</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Diagnostics (%1)</source>
        <translation>诊断（%1）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Diagnostics</source>
        <translation>诊断</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+580"/>
        <source>Free benchmark</source>
        <translation>无标杆比对</translation>
    </message>
    <message>
        <location line="-579"/>
        <source>Step</source>
        <translation>步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU rank ↔ bench rank</source>
        <translation>NPU 卡 ↔ 标杆卡</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Step:</source>
        <translation>步骤(&amp;S)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Rank:</source>
        <translation>卡号(&amp;R)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+1"/>
        <source>no pair open</source>
        <translation>未打开数据</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show &amp;legend</source>
        <translation>显示图例(&amp;L)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open an NPU dump and its bench dump together, with the compare options.</source>
        <translation>同时打开 NPU dump 数据及其标杆 dump 数据，并设置比对选项。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose another bench dump for the open NPU dump (the Open pair dialog).</source>
        <translation>为当前 NPU dump 数据选择另一份标杆 dump 数据（打开数据对话框）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open msprobe&apos;s compare.json, which names both sides.</source>
        <translation>打开 msprobe 的 compare.json，其中指定了两侧的数据。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Write the comparison of the shown pair as msprobe&apos;s CSV (and XLSX).</source>
        <translation>将当前数据的比对结果写成 msprobe 格式的 CSV（及 XLSX）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Close ProbeScope.</source>
        <translation>关闭 ProbeScope。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expand every node of the tree.</source>
        <translation>展开树中的所有节点。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Collapse the tree to its top level.</source>
        <translation>将树折叠到顶层。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show or hide the colour legend under the tree.</source>
        <translation>显示或隐藏树下方的颜色图例。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select the first node, in execution order, whose output fails while its inputs pass.</source>
        <translation>选中按执行顺序首个输入达标而输出不达标的节点。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select the next failing node in execution order.</source>
        <translation>按执行顺序选中下一个不达标节点。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select the previous failing node in execution order.</source>
        <translation>按执行顺序选中上一个不达标节点。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Search node names (plain text or a regular expression).</source>
        <translation>搜索节点名称（纯文本或正则表达式）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the compare that is running.</source>
        <translation>停止正在进行的比对。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Replay the dumped APIs with LibTorch and judge them (msprobe&apos;s run_ut).</source>
        <translation>用 LibTorch 回放 dump 的 API 并判定其精度（msprobe 的 run_ut）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Colours, theme, language, threads, matching and mapping options.</source>
        <translation>颜色、主题、语言、线程数、匹配与映射选项。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the bundled demo pair.</source>
        <translation>打开自带的示例数据。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>List every keyboard shortcut.</source>
        <translation>列出所有快捷键。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Version and licence of ProbeScope.</source>
        <translation>ProbeScope 的版本与许可证。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open an NPU and a bench dump (File menu, drag and drop, or Help → Open demo).</source>
        <translation>请打开一份 NPU dump 数据和一份标杆 dump 数据（“文件”菜单、拖放，或“帮助 → 打开示例”）。</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>Open demo</source>
        <translation>打开示例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The bundled demo pair was not found.</source>
        <translation>未找到自带的示例数据。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Cannot open: %1</source>
        <translation>无法打开：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cannot open the dumps</source>
        <translation>无法打开 dump 数据</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>Open msprobe compare.json</source>
        <translation>打开 msprobe compare.json</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>NPU dump: %1 — now drop the bench dump.</source>
        <translation>NPU dump：%1 — 请再拖入标杆 dump。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>(no step)</source>
        <translation>（无 step）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>step %1</source>
        <translation>step %1</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Comparing %1 (%2 nodes)…</source>
        <translation>正在比对 %1（%2 个节点）…</translation>
    </message>
    <message>
        <location line="+54"/>
        <source>First failing node: %1 (execution #%2): its inputs match, its output does not — %3</source>
        <translation>首个不达标节点：%1（执行序号 #%2）：输入一致，输出不一致 — %3</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%1  [%2 s]</source>
        <translation>%1  [%2 秒]</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Compare failed: %1 — the statuses shown are incomplete.</source>
        <translation>比对失败：%1 —— 显示的状态不完整。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Compare cancelled — the statuses shown are incomplete (pending nodes were not compared).</source>
        <translation>比对已取消 —— 显示的状态不完整（待计算的节点未比对）。</translation>
    </message>
    <message>
        <source>Checking both sides</source>
        <translation>正在检查两侧</translation>
    </message>
    <message>
        <source>Planning the pairs</source>
        <translation>正在规划比对对</translation>
    </message>
    <message>
        <source>Reading the folders of %1…</source>
        <translation>正在读取 %1 的目录…</translation>
    </message>
    <message>
        <source>Opening cancelled.</source>
        <translation>已取消打开。</translation>
    </message>
    <message>
        <location line="-31"/>
        <source>Inputs already differ at the first failing node %1: the divergence began before this dump.</source>
        <translation>首个不达标节点 %1 的输入已有差异：偏差在本次 dump 之前就已出现。</translation>
    </message>
    <message>
        <location line="-380"/>
        <source>Open &amp;pair…</source>
        <translation>打开数据对(&amp;P)…</translation>
    </message>
    <message>
        <location line="+359"/>
        <source>%1 · %2 elapsed</source>
        <translation>%1 · 已用 %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · %2 elapsed, about %3 left</source>
        <translation>%1 · 已用 %2，约剩 %3</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>No failing node: every compared row passes.</source>
        <translation>没有不达标节点：所有比对行均通过。</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location line="+179"/>
        <source>Free benchmark results of %1. Open a bench dump too to compare, and to see the flagged APIs in the tree.</source>
        <translation>%1 的无标杆比对结果。再打开标杆 dump 即可进行比对，并在树中查看精度风险 API。</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>Open a bench dump too to see %1 in the tree.</source>
        <translation>再打开标杆 dump 才能在树中查看 %1。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>The opened dumps have no step %1, rank %2 for %3.</source>
        <translation>已打开的 dump 中没有 %3 所在的 step %1、rank %2。</translation>
    </message>
    <message>
        <location line="+11"/>
        <location line="+33"/>
        <source>%1 is not in the shown dump.</source>
        <translation>当前显示的 dump 中没有 %1。</translation>
    </message>
    <message>
        <location line="-25"/>
        <location line="+4"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>Open a dump pair first.</source>
        <translation>请先打开一对 dump 数据。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Wait for the compare to finish first.</source>
        <translation>请等待比对完成。</translation>
    </message>
    <message>
        <location line="+82"/>
        <source>About ProbeScope</source>
        <translation>关于 ProbeScope</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;ProbeScope %1&lt;/b&gt;&lt;p&gt;Inspect and compare msprobe precision dumps: find where an NPU run first diverges from its bench.&lt;/p&gt;</source>
        <translation>&lt;b&gt;ProbeScope %1&lt;/b&gt;&lt;p&gt;查看并比对 msprobe 精度 dump 数据：找出 NPU 运行最早在何处与标杆出现偏差。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Job &amp;origin</source>
        <translation>作业偏差源头(&amp;O)</translation>
    </message>
    <message>
        <source>Same node on the next &amp;rank</source>
        <translation>下一个 rank 的同一节点(&amp;R)</translation>
    </message>
    <message>
        <source>Open the pair where the job began to diverge (the rank overview&apos;s origin) and select its node.</source>
        <translation>打开作业开始出现偏差的配对（各卡总览中的源头）并选中其节点。</translation>
    </message>
    <message>
        <source>On a communication node (Distributed.*): open the next rank&apos;s pair of the same step and select the matching node.</source>
        <translation>在通信节点（Distributed.*）上：打开同一 step 中下一个 rank 的配对并选中对应节点。</translation>
    </message>
    <message>
        <source>No job origin yet: the rank overview has found no failing pair so far.</source>
        <translation>尚无作业偏差源头：各卡总览目前未发现不达标的配对。</translation>
    </message>
    <message>
        <source>Select a communication node (Distributed.*) to jump to another rank&apos;s.</source>
        <translation>请选中一个通信节点（Distributed.*）以跳转到另一个 rank 的对应节点。</translation>
    </message>
    <message>
        <source>This step has no other rank.</source>
        <translation>该 step 没有其他 rank。</translation>
    </message>
    <message>
        <source>Compare an NPU dump with its bench</source>
        <translation>将 NPU dump 与其标杆比对</translation>
    </message>
    <message>
        <source>Open the two dumps of a pair (a dump root, a step or rank folder, a dump.json or a .pkl on each side), drop two folders here, or try the bundled demo.</source>
        <translation>打开一对 dump 的两侧（每侧可以是 dump 根目录、step 或 rank 目录、dump.json 或 .pkl），把两个目录拖放到这里，或试试自带的示例数据。</translation>
    </message>
    <message>
        <source>Open pair…</source>
        <translation>打开比对对…</translation>
    </message>
    <message>
        <source>&amp;Recent pairs:</source>
        <translation>最近的比对对(&amp;R)：</translation>
    </message>
    <message>
        <source>This rank — %1 (the job origin is not known yet: the rank overview is still comparing the other ranks)</source>
        <translation>本 rank — %1（作业偏差源头尚未确定：各卡总览仍在比对其他 rank）</translation>
    </message>
    <message>
        <source>step %1 %2</source>
        <translation>step %1 %2</translation>
    </message>
    <message>
        <source>rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <source>Job origin (O): %1, node %2 (execution #%3) — %4</source>
        <translation>作业偏差源头 (O)：%1，节点 %2（执行序号 #%3）— %4</translation>
    </message>
    <message>
        <source>This rank — %1 · Job origin (O): %2, node %3</source>
        <translation>本 rank — %1 · 作业偏差源头 (O)：%2，节点 %3</translation>
    </message>
    <message>
        <source>Open or step into</source>
        <translation>展开或进入</translation>
    </message>
    <message>
        <source>In the tree: open a closed node, or go to the first child of an open one.</source>
        <translation>在树中：展开折叠的节点，或转到已展开节点的第一个子节点。</translation>
    </message>
    <message>
        <source>Close or step out</source>
        <translation>折叠或退出</translation>
    </message>
    <message>
        <source>In the tree: close an open node, or go to the parent of a closed one.</source>
        <translation>在树中：折叠已展开的节点，或转到折叠节点的父节点。</translation>
    </message>
    <message>
        <source>Open / close</source>
        <translation>展开 / 折叠</translation>
    </message>
    <message>
        <source>In the tree: open or close the selected node.</source>
        <translation>在树中：展开或折叠所选节点。</translation>
    </message>
    <message>
        <source>Open the whole subtree</source>
        <translation>展开整个子树</translation>
    </message>
    <message>
        <source>In the tree: open the selected node and everything below it.</source>
        <translation>在树中：展开所选节点及其下的全部节点。</translation>
    </message>
    <message>
        <source>Next / previous hit</source>
        <translation>下一个 / 上一个匹配</translation>
    </message>
    <message>
        <source>In the search field: select the next or the previous node that matches.</source>
        <translation>在搜索框中：选择下一个或上一个匹配的节点。</translation>
    </message>
    <message>
        <source>Open the tensors</source>
        <translation>打开张量</translation>
    </message>
    <message>
        <source>In Details: open the selected column&apos;s tensors in the Tensors tab (or double-click it).</source>
        <translation>在详情中：在“张量”标签页打开所选列的张量（或双击该列）。</translation>
    </message>
    <message>
        <source>Next / previous tab</source>
        <translation>下一个 / 上一个标签页</translation>
    </message>
    <message>
        <source>In the panels on the right: show the next or the previous tab.</source>
        <translation>在右侧面板中：显示下一个或上一个标签页。</translation>
    </message>
    <message>
        <source>Go to the &amp;tree</source>
        <translation>转到树(&amp;T)</translation>
    </message>
    <message>
        <source>Move the keyboard focus to the tree (or to Open pair… before anything is open).</source>
        <translation>将键盘焦点移到树（尚未打开任何内容时移到“打开比对对…”）。</translation>
    </message>
    <message>
        <source>Tab %1</source>
        <translation>标签页 %1</translation>
    </message>
    <message>
        <source>Go to %1</source>
        <translation>转到%1</translation>
    </message>
    <message>
        <source>Show this tab on the right and move the keyboard focus into it.</source>
        <translation>显示右侧的此标签页，并将键盘焦点移入其中。</translation>
    </message>
    <message>
        <source>Open &amp;graph file (.vis.db, .vis, .trend.db)…</source>
        <translation>打开图文件(&amp;G)（.vis.db、.vis、.trend.db）…</translation>
    </message>
    <message>
        <source>Trend (.trend.db)</source>
        <translation>趋势（.trend.db）</translation>
    </message>
    <message>
        <source>Open an msprobe graph file</source>
        <translation>打开 msprobe 图文件</translation>
    </message>
    <message>
        <source>msprobe graph files (*.vis.db *.vis *.trend.db);;All files (*)</source>
        <translation>msprobe 图文件 (*.vis.db *.vis *.trend.db);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Opening %1…</source>
        <translation>正在打开 %1…</translation>
    </message>
    <message>
        <source>Opening %1 was cancelled.</source>
        <translation>已取消打开 %1。</translation>
    </message>
    <message>
        <source>Open a graph file of msprobe: a .vis.db (8.x or 26.x), a .vis (1.2) or a .trend.db (data2db).</source>
        <translation>打开 msprobe 的图文件：.vis.db（8.x 或 26.x）、.vis（1.2）或 .trend.db（data2db）。</translation>
    </message>
    <message>
        <source>Cannot open the graph file</source>
        <translation>无法打开图文件</translation>
    </message>
    <message>
        <source>%1: %2 steps × %3 ranks × %4 modules</source>
        <translation>%1：%2 个 step × %3 个 rank × %4 个模块</translation>
    </message>
    <message>
        <source>ProbeScope — %1</source>
        <translation>ProbeScope — %1</translation>
    </message>
    <message>
        <source>%1 The file has %2 inconsistencies (probescope-cli info lists them).</source>
        <translation>%1 该文件有 %2 处不一致（probescope-cli info 会列出）。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>P: %1 on the next rank, %2.</source>
        <translation>P：下一张卡 %2 上的 %1。</translation>
    </message>
    <message>
        <source>Problems met while reading an input are listed here.</source>
        <translation>读取输入时遇到的问题会列在这里。</translation>
    </message>
    <message>
        <source>No problems: every file of the shown input was read without an error or a warning.</source>
        <translation>没有问题：当前输入的每个文件都已读取，没有错误或警告。</translation>
    </message>
    <message>
        <source>Check &amp;setup (packs or checkpoints)…</source>
        <translation>检查配置(&amp;S)（配置包或检查点）…</translation>
    </message>
    <message>
        <source>Communication ops</source>
        <translation>通信算子</translation>
    </message>
    <message>
        <source>First NaN/Inf</source>
        <translation>首个 NaN/Inf</translation>
    </message>
    <message>
        <source>Where the run first produced a NaN/Inf (overflow_check) and where it reached each other rank; O goes to the origin, P along the chain</source>
        <translation>本次运行首次产生 NaN/Inf 之处（overflow_check）及其到达其他各 rank 之处；O 跳到源头，P 沿链前进</translation>
    </message>
    <message>
        <source>ProbeScope — %1 (one run)</source>
        <translation>ProbeScope — %1（单次运行）</translation>
    </message>
    <message>
        <source>Still looking for the first NaN/Inf of %1.</source>
        <translation>仍在查找 %1 的第一个 NaN/Inf。</translation>
    </message>
    <message>
        <source>Looking for the first NaN/Inf in %1…</source>
        <translation>正在查找 %1 中的第一个 NaN/Inf…</translation>
    </message>
    <message>
        <source>Cannot open the run</source>
        <translation>无法打开该运行</translation>
    </message>
    <message>
        <source>The opened run has no rank %1 in that step.</source>
        <translation>打开的运行在该 step 中没有 rank %1。</translation>
    </message>
    <message>
        <source>The NaN/Inf reached no other rank: the chain is the origin alone.</source>
        <translation>NaN/Inf 未到达其他 rank：链中只有源头。</translation>
    </message>
    <message>
        <source>P: along the NaN/Inf chain to rank %1, %2.</source>
        <translation>P：沿 NaN/Inf 链到 rank %1，%2。</translation>
    </message>
    <message>
        <source>One run: a dump is damaged, so the NaN/Inf search refused it (the Diagnostics tab says where).</source>
        <translation>单次运行：有 dump 已损坏，NaN/Inf 查找拒绝了它（位置见“诊断”页）。</translation>
    </message>
    <message>
        <source>One run: no NaN/Inf origin — no node has finite inputs and a NaN/Inf output (overflow_check finds no anomaly).</source>
        <translation>单次运行：没有 NaN/Inf 源头——没有节点输入有限而输出为 NaN/Inf（overflow_check 未发现异常）。</translation>
    </message>
    <message>
        <source>step %1 rank %2</source>
        <translation>step %1 rank %2</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>First NaN/Inf (O): %1, %2 — its inputs are finite, its output is not</source>
        <translation>首个 NaN/Inf（O）：%1，%2——输入有限，输出不是</translation>
    </message>
    <message>
        <source>Choose the run's dump first (Dump of this run…) to open step %1's dump.</source>
        <translation>请先选择该运行的 dump（“本运行的 dump…”），才能打开 step %1 的 dump。</translation>
    </message>
    <message>
        <source>The run's dump has no step %1, rank %2.</source>
        <translation>该运行的 dump 中没有 step %1、rank %2。</translation>
    </message>
    <message>
        <source>The bench run's monitor folder</source>
        <translation>标杆运行的 monitor 文件夹</translation>
    </message>
    <message>
        <source>%1 holds no trends</source>
        <translation>%1 中没有趋势数据</translation>
    </message>
    <message>
        <source>Cannot open the bench run: %1</source>
        <translation>无法打开标杆运行：%1</translation>
    </message>
    <message>
        <source>Bench run %1 overlaid on the trends.</source>
        <translation>标杆运行 %1 已叠加到趋势上。</translation>
    </message>
    <message numerus="yes">
        <source>; it reached %n other rank(s) (P follows the chain)</source>
        <translation>
            <numerusform>；它到达了其他 %n 个 rank（P 沿链前进）</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>probescope::ui::MetricPlot</name>
    <message>
        <location filename="../../ui/inspect/metricplot.cpp" line="+43"/>
        <source>tensor</source>
        <comment>compare mode</comment>
        <translation>真实数据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>statistics</source>
        <comment>compare mode</comment>
        <translation>统计量</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>md5</source>
        <comment>compare mode</comment>
        <translation>md5</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>no data</source>
        <translation>无数据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pending</source>
        <translation>待计算</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unmatched</source>
        <translation>未匹配</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Cosine</source>
        <translation>Cosine</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MaxAbsErr</source>
        <translation>MaxAbsErr</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MaxRelativeErr</source>
        <translation>MaxRelativeErr</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>One Thousandth Err Ratio</source>
        <translation>千分之一误差占比</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>NormRelativeErr</source>
        <translation>NormRelativeErr</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Precision index</source>
        <translation>精度指数</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Log scale</source>
        <translation>对数坐标</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Save PNG…</source>
        <translation>保存 PNG…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>execution order</source>
        <translation>执行顺序</translation>
    </message>
    <message>
        <location line="+117"/>
        <source>%1 along execution order</source>
        <translation>%1 随执行顺序的变化</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>first failure</source>
        <translation>首个不达标</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>first failing node (inputs already differ)</source>
        <translation>首个不达标节点（输入已有差异）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2</source>
        <comment>first failure: node</comment>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 is not available in a %2 compare.</source>
        <translation>%2 模式的比对中没有 %1。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>All %1 values are 0: nothing to show on a log scale.</source>
        <translation>全部 %1 个值均为 0：对数坐标下无可显示内容。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> (%1 values of 0 not shown on the log scale)</source>
        <translation>（%1 个 0 值未在对数坐标下显示）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No compare loaded.</source>
        <translation>未加载比对结果。</translation>
    </message>
    <message>
        <location line="+167"/>
        <source>%1
%2: %3
#%4 · %5</source>
        <comment>node key, metric: value, execution index · status</comment>
        <translation>%1
%2：%3
#%4 · %5</translation>
    </message>
</context>
<context>
    <name>probescope::ui::NodeBadgeDelegate</name>
    <message>
        <location filename="../../ui/models/nodebadges.cpp" line="+177"/>
        <source>FB</source>
        <comment>free benchmark badge on a tree node</comment>
        <translation>无标杆</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Free benchmark flagged this API (%1, %2, step %3): max_rel %4, threshold %5 for %6</source>
        <translation>无标杆比对检出该 API（%1，%2，step %3）：max_rel %4，%6 的阈值为 %5</translation>
    </message>
    <message numerus="yes">
        <location line="+11"/>
        <source>%n flagged row(s) in this step</source>
        <translation>
            <numerusform>本 step 共 %n 行精度风险结果</numerusform>
        </translation>
    </message>
    <message>
        <location line="+45"/>
        <source>UT</source>
        <comment>run_ut badge on a tree node</comment>
        <translation>预检</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>run_ut %1: replay %2</source>
        <translation>精度预检 %1：重放结果 %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dumped outputs against the bench: %1</source>
        <translation>dump 输出与标杆比对：%1</translation>
    </message>
</context>
<context>
    <name>probescope::ui::NodeRowsModel</name>
    <message>
        <location filename="../../ui/models/noderowsmodel.cpp" line="+176"/>
        <source>Leaf</source>
        <translation>数据项</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The input, output or parameter of the node</source>
        <translation>节点的输入、输出或参数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Verdict</source>
        <translation>判定</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ProbeScope&apos;s status of the row</source>
        <translation>ProbeScope 对该行的判定</translation>
    </message>
    <message>
        <location line="-67"/>
        <source>NPU dtype</source>
        <translation>NPU dtype</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench dtype</source>
        <translation>标杆 dtype</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU shape</source>
        <translation>NPU shape</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench shape</source>
        <translation>标杆 shape</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU requires_grad</source>
        <translation>NPU requires_grad</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench requires_grad</source>
        <translation>标杆 requires_grad</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cosine similarity of the two tensors</source>
        <translation>两个张量的余弦相似度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Euclidean distance of the two tensors</source>
        <translation>两个张量的欧氏距离</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Largest absolute difference</source>
        <translation>最大绝对误差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Largest relative difference</source>
        <translation>最大相对误差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>1‰ ratio</source>
        <translation>1‰误差占比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>One Thousandth Err Ratio: share of elements whose relative error is below 0.001</source>
        <translation>One Thousandth Err Ratio（千分之一误差占比）：相对误差小于 0.001 的元素所占比例</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>5‰ ratio</source>
        <translation>5‰误差占比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Five Thousandths Err Ratio: share of elements whose relative error is below 0.005</source>
        <translation>Five Thousandths Err Ratio（千分之五误差占比）：相对误差小于 0.005 的元素所占比例</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>NPU md5</source>
        <translation>NPU md5</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench md5</source>
        <translation>标杆 md5</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>NPU max</source>
        <translation>NPU max</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench max</source>
        <translation>标杆 max</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU min</source>
        <translation>NPU min</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench min</source>
        <translation>标杆 min</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU mean</source>
        <translation>NPU mean</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench mean</source>
        <translation>标杆 mean</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU norm</source>
        <translation>NPU L2norm</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench norm</source>
        <translation>标杆 L2norm</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Accuracy reached</source>
        <translation>精度达标</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Result</source>
        <translation>Result</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>msprobe&apos;s Result column</source>
        <translation>msprobe 的 Result 列</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Requires_grad consistent</source>
        <translation>requires_grad 一致</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Err_message</source>
        <translation>Err_message</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Why msprobe flagged the row</source>
        <translation>msprobe 标记该行的原因</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>NPU data file</source>
        <translation>NPU 数据文件</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tensor file of the NPU leaf</source>
        <translation>NPU 数据项的张量文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench data file</source>
        <translation>标杆数据文件</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tensor file of the bench leaf</source>
        <translation>标杆数据项的张量文件</translation>
    </message>
    <message>
        <location line="+141"/>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <location line="+57"/>
        <source>Row %1 of the compare table</source>
        <translation>比对表第 %1 行</translation>
    </message>
    <message>
        <source>Yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>No</source>
        <translation>否</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>msprobe: %1</source>
        <translation>msprobe：%1</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
</context>
<context>
    <name>probescope::ui::NodeTrendPlot</name>
    <message>
        <location filename="../../ui/inspect/nodetrendplot.cpp" line="+164"/>
        <source>Leaf</source>
        <translation>数据项</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Statistic</source>
        <translation>统计量</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Save PNG…</source>
        <translation>保存 PNG…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>step</source>
        <translation>step</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Max</source>
        <comment>statistic</comment>
        <translation>Max</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Min</source>
        <comment>statistic</comment>
        <translation>Min</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Mean</source>
        <comment>statistic</comment>
        <translation>Mean</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Norm</source>
        <comment>statistic</comment>
        <translation>Norm</translation>
    </message>
    <message>
        <location line="+98"/>
        <source>Reading %1 of %2 dump files…</source>
        <translation>正在读取 dump 文件 %1 / %2…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 dump files could not be read.</source>
        <translation>%1 个 dump 文件无法读取。</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Statistics across steps and ranks</source>
        <translation>跨 step 与 rank 的统计量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 of %2.%3 across steps and ranks</source>
        <translation>%2.%3 的 %1（跨 step 与 rank）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>No session opened.</source>
        <translation>尚未打开数据。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Select a node to see its statistics across steps and ranks.</source>
        <translation>选择一个节点，查看其跨 step 与 rank 的统计量。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Loading was cancelled.</source>
        <translation>加载已取消。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>%1 bench</source>
        <comment>rank</comment>
        <translation>%1 标杆</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 NPU</source>
        <comment>rank</comment>
        <translation>%1 NPU</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>%1 is in none of the dumps.</source>
        <translation>所有 dump 数据中都没有 %1。</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>%1 has no %2 value for %3.</source>
        <translation>%1 的 %3 没有 %2 值。</translation>
    </message>
    <message>
        <source>bench</source>
        <comment>series of a dump without rank folders</comment>
        <translation>标杆</translation>
    </message>
    <message>
        <source>NPU</source>
        <comment>series of a dump without rank folders</comment>
        <translation>NPU</translation>
    </message>
</context>
<context>
    <name>probescope::ui::OpenPairDialog</name>
    <message>
        <location filename="../../ui/panels/openpairdialog.cpp" line="+63"/>
        <source>Open pair</source>
        <translation>打开数据对</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>dump folder (root, step, rank) or dump.json; drop a folder here</source>
        <translation>dump 文件夹（根目录、step、rank）或 dump.json；可将文件夹拖放到此处</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>NPU dump:</source>
        <translation>NPU dump 数据：</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Open NPU dump</source>
        <translation>打开 NPU dump 数据</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bench dump:</source>
        <translation>标杆 dump 数据：</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Open bench dump</source>
        <translation>打开标杆 dump 数据</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Recent pairs</source>
        <translation>最近打开</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Compare options</source>
        <translation>比对选项</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Fuzzy matching (-f)</source>
        <translation>模糊匹配（-f）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stack column (-s)</source>
        <translation>堆栈列（-s）</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Mapping options: none (Tools → Settings to set -dm, -cm, -am, -lm).</source>
        <translation>映射选项：无（在 工具 → 设置 中设置 -dm、-cm、-am、-lm）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mapping options: %1 (Tools → Settings to change).</source>
        <translation>映射选项：%1（在 工具 → 设置 中修改）。</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>Give the NPU dump.</source>
        <translation>请指定 NPU dump 数据。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The NPU dump %1 does not exist.</source>
        <translation>NPU dump 数据 %1 不存在。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Give the bench dump (or open msprobe&apos;s compare.json as the NPU side).</source>
        <translation>请指定标杆 dump 数据（或将 msprobe 的 compare.json 作为 NPU 侧打开）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The bench dump %1 does not exist.</source>
        <translation>标杆 dump 数据 %1 不存在。</translation>
    </message>
    <message>
        <source>&amp;NPU dump:</source>
        <translation>NPU dump(&amp;N)：</translation>
    </message>
    <message>
        <source>&amp;Bench dump:</source>
        <translation>标杆 dump(&amp;B)：</translation>
    </message>
    <message>
        <source>dump root, step or rank folder, dump.json or .pkl; drop a folder here</source>
        <translation>dump 根目录、step 或 rank 目录、dump.json 或 .pkl；可将目录拖放到此处</translation>
    </message>
    <message>
        <source>Nothing to compare: %1</source>
        <translation>没有可比对的内容：%1</translation>
    </message>
    <message>
        <source>The NPU dump cannot be opened: %1</source>
        <translation>无法打开 NPU dump：%1</translation>
    </message>
    <message>
        <source>The bench dump cannot be opened: %1</source>
        <translation>无法打开标杆 dump：%1</translation>
    </message>
    <message>
        <source>Free benchmark results only: nothing is compared without a bench dump.</source>
        <translation>仅有无标杆比对结果：没有标杆 dump 时不做比对。</translation>
    </message>
    <message>
        <source>An msprobe graph file: it opens on its own (no bench dump).</source>
        <translation>msprobe 图文件：单独打开（无需标杆 dump）。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::RankOverviewModel</name>
    <message>
        <location filename="../../ui/models/rankoverviewmodel.cpp" line="+140"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> (inputs already differ)</source>
        <translation>（输入已有差异）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>▶ job origin: %1</source>
        <translation>▶ 作业偏差源头：%1</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>Step</source>
        <translation>步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NPU ↔ bench</source>
        <translation>NPU ↔ 标杆</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First failing node</source>
        <translation>首个不达标节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Exec. index</source>
        <translation>执行序号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warnings</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unmatched</source>
        <translation>未匹配</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>State</source>
        <translation>运行状态</translation>
    </message>
    <message>
        <source>Origin: no compared pair fails.</source>
        <translation>源头：没有已比对的配对不达标。</translation>
    </message>
    <message>
        <source>Origin: none yet (no pair analysed so far fails).</source>
        <translation>源头：暂无（目前已分析的配对均达标）。</translation>
    </message>
    <message>
        <source>rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <source>Origin: step %1 %2, node %3 (#%4) — %5</source>
        <translation>源头：step %1 %2，节点 %3（#%4）— %5</translation>
    </message>
    <message>
        <source>Not analysed yet.</source>
        <translation>尚未分析。</translation>
    </message>
    <message>
        <source>Being analysed…</source>
        <translation>正在分析…</translation>
    </message>
    <message>
        <source>Failed to compare: %1</source>
        <translation>比对失败：%1</translation>
    </message>
    <message>
        <source>Worst verdict: %1</source>
        <translation>最差结论：%1</translation>
    </message>
    <message>
        <source>No failing node.</source>
        <translation>没有不达标节点。</translation>
    </message>
    <message>
        <source>First failure #%1: %2%3</source>
        <translation>首个不达标 #%1：%2%3</translation>
    </message>
    <message>
        <source>▶ The job&apos;s origin: %1</source>
        <translation>▶ 该作业的偏差源头：%1</translation>
    </message>
    <message>
        <source>Salvaged: a dump was cut or damaged and read partially — %1</source>
        <translation>已抢救：dump 被截断或损坏，仅读取了部分内容 — %1</translation>
    </message>
    <message>
        <source>done (salvaged)</source>
        <translation>完成（已抢救）</translation>
    </message>
    <message numerus="yes">
        <source>after %n communication call(s)</source>
        <translation>
            <numerusform>在 %n 次通信调用之后</numerusform>
        </translation>
    </message>
    <message>
        <source>first failure not caused by a communication, after 1 communication call, fewer than or as many as any other diverging rank</source>
        <translation>首个不达标节点不是由通信引起，在 1 次通信调用之后，不多于任何其他出现偏差的 rank</translation>
    </message>
    <message>
        <source>first failure not caused by a communication, after %1 communication calls, fewer than or as many as any other diverging rank</source>
        <translation>首个不达标节点不是由通信引起，在 %1 次通信调用之后，不多于任何其他出现偏差的 rank</translation>
    </message>
    <message>
        <source>every diverging rank first fails in a communication node; this one after the fewest (%1)</source>
        <translation>每个出现偏差的 rank 都首先在通信节点不达标；此 rank 之前的通信调用最少（%1）</translation>
    </message>
    <message>
        <source>(its pair was salvaged from a damaged dump: %1)</source>
        <translation>（它的比对对是从损坏的 dump 中抢救读取的：%1）</translation>
    </message>
    <message>
        <source>not searched</source>
        <translation>未搜索</translation>
    </message>
    <message>
        <source>no NaN/Inf origin</source>
        <translation>无 NaN/Inf 源头</translation>
    </message>
    <message>
        <source>NaN/Inf reached</source>
        <translation>NaN/Inf 已到达</translation>
    </message>
    <message>
        <source>first NaN/Inf</source>
        <translation>首个 NaN/Inf</translation>
    </message>
    <message>
        <source>First NaN/Inf: none (no node has finite inputs and a NaN/Inf output).</source>
        <translation>首个 NaN/Inf：无（没有输入有限而输出为 NaN/Inf 的节点）。</translation>
    </message>
    <message>
        <source>First NaN/Inf: %1 %2, node %3</source>
        <translation>首个 NaN/Inf：%1 %2，节点 %3</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>Rank</translation>
    </message>
    <message>
        <source>NaN/Inf node</source>
        <translation>NaN/Inf 节点</translation>
    </message>
</context>
<context>
    <name>probescope::ui::RunUtDialog</name>
    <message>
        <source>Why Run is disabled</source>
        <translation>“运行”不可用的原因</translation>
    </message>
    <message>
        <location filename="../../ui/panels/runutdialog.cpp" line="+44"/>
        <source>Run run_ut</source>
        <translation>运行 run_ut</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Replays every API of a dump.json on the device and in higher precision on the CPU, and writes msprobe&apos;s accuracy_checking_result and accuracy_checking_details CSVs.</source>
        <translation>在设备上、并在 CPU 上以更高精度回放 dump.json 中的每个 API，写出 msprobe 的 accuracy_checking_result 和 accuracy_checking_details CSV 文件。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>…/step0/rank0/dump.json</source>
        <translation>…/step0/rank0/dump.json</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+16"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="-15"/>
        <source>dump.json (-api_info):</source>
        <translation>dump.json（-api_info）：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Device (-d):</source>
        <translation>设备（-d）：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Replay one call of each group of similar calls (-f, --filter_api)</source>
        <translation>每组相似调用只回放一次（-f，--filter_api）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>all APIs (e.g. conv2d, linalg.inv)</source>
        <translation>全部 API（例如 conv2d, linalg.inv）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Only these APIs are replayed; names separated by commas or spaces</source>
        <translation>只回放这些 API；名称以逗号或空格分隔</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>White list:</source>
        <translation>白名单：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>These APIs are skipped; the black list wins over the white list</source>
        <translation>跳过这些 API；黑名单优先于白名单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Black list:</source>
        <translation>黑名单：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Output folder (-o):</source>
        <translation>输出目录（-o）：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>msprobe 1.2: per-API precision standards (default)</source>
        <translation>msprobe 1.2：按 API 选择精度标准（默认）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>msprobe 26: benchmark standard for every float</source>
        <translation>msprobe 26：所有浮点类型使用标杆比对法</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Profile:</source>
        <translation>配置：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%v of %m APIs</source>
        <translation>%v / %m 个 API</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The result files are listed here.</source>
        <translation>结果文件将列在此处。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Export CSVs…</source>
        <translation>导出 CSV……</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the written result and details CSVs to a folder (existing files are kept)</source>
        <translation>将已写出的结果与详情 CSV 复制到文件夹（不覆盖已有文件）</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel run</source>
        <translation>取消运行</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>run_ut availability</source>
        <translation>run_ut 可用性</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>dump.json to replay</source>
        <translation>要回放的 dump.json</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>msprobe dump (dump.json);;JSON files (*.json)</source>
        <translation>msprobe dump 数据 (dump.json);;JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>run_ut output folder</source>
        <translation>run_ut 输出目录</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>run_ut is running.</source>
        <translation>run_ut 正在运行。</translation>
    </message>
    <message>
        <location line="+93"/>
        <source>Export run_ut CSVs to</source>
        <translation>将 run_ut CSV 导出到</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Export failed: %1</source>
        <translation>导出失败：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Exported: %1</source>
        <translation>已导出：%1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Finished.</source>
        <translation>已完成。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>%1 APIs: %2 pass, %3 warning, %4 error, %5 SKIP in %6 s</source>
        <translation>%1 个 API：%2 个通过，%3 个警告，%4 个错误，%5 个跳过，用时 %6 秒</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Result: %1</source>
        <translation>结果：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Details: %1</source>
        <translation>详情：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Dumped outputs: %1</source>
        <translation>dump 输出：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>run_ut failed: %1</source>
        <translation>run_ut 运行失败：%1</translation>
    </message>
    <message>
        <source>Verdict (the worse of the two lines below): %1 APIs: %2 pass, %3 warning, %4 error, %5 SKIP in %6 s</source>
        <translation>判定（下面两行中较差者）：%1 个 API：%2 通过，%3 警告，%4 错误，%5 跳过，用时 %6 秒</translation>
    </message>
    <message>
        <source>Replay on the device against the CPU (Forward/Backward): %1 pass, %2 warning, %3 error, %4 SKIP</source>
        <translation>设备上回放对比 CPU（前向/反向）：%1 通过，%2 警告，%3 错误，%4 跳过</translation>
    </message>
    <message>
        <source>Dumped outputs against the CPU: %1 pass, %2 warning, %3 error, %4 not judged</source>
        <translation>dump 的输出对比 CPU：%1 通过，%2 警告，%3 错误，%4 未判定</translation>
    </message>
</context>
<context>
    <name>probescope::ui::RunUtResultModel</name>
    <message>
        <location filename="../../ui/models/runutresultmodel.cpp" line="+117"/>
        <source>API name</source>
        <translation>API 名称</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Verdict</source>
        <translation>判定</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Forward Test Success</source>
        <translation>前向测试结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backward Test Success</source>
        <translation>反向测试结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dumped outputs</source>
        <translation>dump 输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Message</source>
        <translation>Message</translation>
    </message>
    <message>
        <source>The replay on the device against the CPU: %1</source>
        <translation>设备上回放对比 CPU：%1</translation>
    </message>
    <message>
        <source>The worse of the replay on the device against the CPU (%1) and of the dumped outputs against the CPU (%2)</source>
        <translation>设备上回放对比 CPU（%1）与 dump 的输出对比 CPU（%2）中较差者</translation>
    </message>
    <message>
        <source>Dumped outputs vs CPU</source>
        <translation>dump 输出 vs CPU</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>SKIP</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>msprobe&apos;s column: %1</source>
        <translation>msprobe 的列：%1</translation>
    </message>
</context>
<context>
    <name>probescope::ui::SearchBar</name>
    <message>
        <location filename="../../ui/panels/searchbar.cpp" line="+37"/>
        <source>Search nodes (Ctrl+F)</source>
        <translation>搜索节点（Ctrl+F）</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+126"/>
        <source>Search node names; Enter = next hit, Shift+Enter = previous</source>
        <translation>搜索节点名称；Enter = 下一个匹配，Shift+Enter = 上一个</translation>
    </message>
    <message>
        <location line="-122"/>
        <source>Regular expression</source>
        <translation>正则表达式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Match case</source>
        <translation>区分大小写</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Previous hit (Shift+Enter)</source>
        <translation>上一个匹配（Shift+Enter）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Next hit (Enter)</source>
        <translation>下一个匹配（Enter）</translation>
    </message>
    <message>
        <location line="+98"/>
        <source>Invalid regex: %1 (at %2)</source>
        <translation>正则表达式无效：%1（位置 %2）</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Invalid regex</source>
        <translation>正则无效</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>No hits</source>
        <translation>无匹配</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
</context>
<context>
    <name>probescope::ui::SettingsDialog</name>
    <message>
        <source>The language changes when you press OK; some labels of the plots and the tensor inspector follow after a restart.</source>
        <translation>点击“确定”后立即切换语言；图表和张量检查器的部分标签在重启后更新。</translation>
    </message>
    <message>
        <location filename="../../ui/panels/settingsdialog.cpp" line="+51"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Node colours</source>
        <translation>节点颜色</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>msprobe rules (pass / warning / error)</source>
        <translation>msprobe 规则（通过 / 警告 / 错误）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Continuous precision index with bands</source>
        <translation>连续精度指数（分区间着色）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>msprobe rules colour a node by its worst row; the continuous index (older msprobe versions) shows how far a node is off and uses the band limits below</source>
        <translation>msprobe 规则按节点最差的一行着色；连续精度指数（旧版 msprobe）体现节点的偏差程度，并使用下方的区间边界</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Scheme:</source>
        <translation>着色方案：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Warning from index:</source>
        <translation>警告起始指数：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Error from index:</source>
        <translation>错误起始指数：</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Theme:</source>
        <translation>主题：</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The language takes effect when ProbeScope is restarted.</source>
        <translation>语言设置在重启 ProbeScope 后生效。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Compare</source>
        <translation>比对</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Automatic (one per CPU)</source>
        <translation>自动（每个 CPU 一个）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor pairs compared at once; results never depend on it</source>
        <translation>同时比对的张量对数量；比对结果与此无关</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Threads:</source>
        <translation>线程数：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fuzzy matching (-f)</source>
        <translation>模糊匹配（-f）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Match APIs by name and order even when their call numbers differ (msprobe&apos;s -f)</source>
        <translation>即使调用次数编号不同，也按名称和顺序匹配 API（msprobe 的 -f）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stack column (-s)</source>
        <translation>堆栈列（-s）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Add msprobe&apos;s NPU_Stack_Info column from the stack.json beside the NPU dump</source>
        <translation>根据 NPU dump 数据旁的 stack.json 添加 msprobe 的 NPU_Stack_Info 列</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>mapping .yaml (empty: built-in)</source>
        <translation>映射 .yaml（留空：使用内置映射）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose the mapping file</source>
        <translation>选择映射文件</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Mapping file</source>
        <translation>映射文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>YAML (*.yaml *.yml);;All files (*)</source>
        <translation>YAML (*.yaml *.yml);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Data mapping (-dm)</source>
        <translation>数据映射（-dm）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>msprobe&apos;s data_mapping file: NPU row name to bench row name</source>
        <translation>msprobe 的 data_mapping 文件：NPU 行名到标杆行名</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cell mapping (-cm)</source>
        <translation>Cell 映射（-cm）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MindSpore cells to PyTorch modules (msprobe&apos;s -cm)</source>
        <translation>MindSpore cell 到 PyTorch 模块（msprobe 的 -cm）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>API mapping (-am)</source>
        <translation>API 映射（-am）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MindSpore APIs to PyTorch APIs (msprobe&apos;s -am)</source>
        <translation>MindSpore API 到 PyTorch API（msprobe 的 -am）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Layer mapping (-lm)</source>
        <translation>层映射（-lm）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Layers of two model implementations (msprobe&apos;s -lm)</source>
        <translation>两种模型实现之间的层映射（msprobe 的 -lm）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>msprobe 1.2 (default)</source>
        <translation>msprobe 1.2（默认）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>msprobe 26</source>
        <translation>msprobe 26</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Which msprobe version&apos;s compare_result CSV the export reproduces</source>
        <translation>导出时复现哪个 msprobe 版本的 compare_result CSV</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CSV profile:</source>
        <translation>CSV 格式：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Also write the XLSX workbook (red/yellow fills)</source>
        <translation>同时写出 XLSX 工作簿（红/黄底色标记）</translation>
    </message>
    <message>
        <source>The language and the theme change for every panel when you press OK; no restart is needed.</source>
        <translation>按“确定”后所有面板的语言和主题立即切换，无需重启。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::ShortcutsDialog</name>
    <message>
        <location filename="../../ui/panels/shortcutsdialog.cpp" line="+73"/>
        <source>Keyboard shortcuts</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Filter shortcuts</source>
        <translation>筛选快捷键</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Keys</source>
        <translation>按键</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Description</source>
        <translation>说明</translation>
    </message>
    <message>
        <location line="+23"/>
        <source> or </source>
        <translation> 或 </translation>
    </message>
</context>
<context>
    <name>probescope::ui::TaskProgressView</name>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <location filename="../../ui/panels/taskprogressview.cpp" line="+53"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
</context>
<context>
    <name>probescope::ui::TensorInspector</name>
    <message>
        <location filename="../../ui/inspect/tensorinspector.cpp" line="+226"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Rows</source>
        <translation>行</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Columns</source>
        <translation>列</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Log colours</source>
        <translation>对数着色</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Colour differences on a log scale (they often span many decades)</source>
        <translation>按对数刻度为差值着色（差值常跨越多个数量级）</translation>
    </message>
    <message>
        <location line="+49"/>
        <location line="+646"/>
        <source>elements</source>
        <translation>元素数</translation>
    </message>
    <message>
        <location line="-634"/>
        <source>Worst</source>
        <translation>最差</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>by</source>
        <translation>按</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>index</source>
        <translation>索引</translation>
    </message>
    <message>
        <location line="-139"/>
        <location line="+139"/>
        <location line="+628"/>
        <source>NPU</source>
        <translation>NPU</translation>
    </message>
    <message>
        <location line="-765"/>
        <location line="+137"/>
        <location line="+629"/>
        <source>bench</source>
        <translation>标杆</translation>
    </message>
    <message>
        <location line="-764"/>
        <source>|NPU − bench|</source>
        <translation>|NPU − 标杆|</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>relative error</source>
        <translation>相对误差</translation>
    </message>
    <message>
        <location line="+133"/>
        <source>relative</source>
        <translation>相对差</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>Select a tensor row of a compare to see its values.</source>
        <translation>选择比对结果中的一个张量行，查看其数值。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Slice</source>
        <translation>切片</translation>
    </message>
    <message>
        <location line="+54"/>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Reading %1 and its bench tensor…</source>
        <translation>正在读取 %1 及其标杆张量…</translation>
    </message>
    <message>
        <location line="+111"/>
        <source>dim %1 (%2)</source>
        <translation>维度 %1（%2）</translation>
    </message>
    <message>
        <location line="+21"/>
        <location line="+229"/>
        <location line="+1"/>
        <source>dim %1</source>
        <translation>维度 %1</translation>
    </message>
    <message>
        <location line="-62"/>
        <source>%1: empty tensor</source>
        <translation>%1：空张量</translation>
    </message>
    <message>
        <location line="+57"/>
        <location line="+138"/>
        <source>value</source>
        <translation>数值</translation>
    </message>
    <message>
        <location line="-132"/>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>(0-d)</source>
        <translation>（0 维）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>  · %1×%2 blocks (%3)</source>
        <translation>  · %1×%2 分块（%3）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>largest</source>
        <translation>最大值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>mean</source>
        <translation>平均值</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>NPU %1</source>
        <translation>NPU %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>bench %1</source>
        <translation>标杆 %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>relative %1</source>
        <translation>相对误差 %1</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Histogram</source>
        <translation>直方图</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>NaN %1</source>
        <translation>NaN %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>+inf %1</source>
        <translation>+inf %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>−inf %1</source>
        <translation>−inf %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>all %1 equal (Δ = 0)</source>
        <translation>全部 %1 个相等（Δ = 0）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>equal (Δ = 0) %1</source>
        <translation>相等（Δ = 0）%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1: %2</source>
        <comment>histogram: notes</comment>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>log10 of the relative error</source>
        <translation>相对误差的 log10</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>log10 |NPU − bench|</source>
        <translation>log10 |NPU − bench|</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>log10 relative error</source>
        <translation>log10 相对误差</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Values: NPU and bench</source>
        <translation>数值：NPU 与标杆</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Values: NPU</source>
        <translation>数值：NPU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Values: bench</source>
        <translation>数值：标杆</translation>
    </message>
    <message>
        <location line="+62"/>
        <source>max |Δ| %1 at %2 · max relative %3 at %4 · over 1‰: %5 of %6 · over 5‰: %7 · cosine %8</source>
        <translation>最大 |Δ| %1（位于 %2）· 最大相对误差 %3（位于 %4）· 超过 1‰：%5 / %6 · 超过 5‰：%7 · 余弦相似度 %8</translation>
    </message>
    <message>
        <location line="+8"/>
        <source> · %1 NaN/inf differences</source>
        <translation> · %1 处 NaN/inf 差异</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Tensor&lt;/b&gt;: %1</source>
        <translation>&lt;b&gt;张量&lt;/b&gt;：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Cosine %1</source>
        <translation>Cosine %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MaxAbsErr %1</source>
        <translation>MaxAbsErr %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Compare table&lt;/b&gt;: %1</source>
        <translation>&lt;b&gt;比对表&lt;/b&gt;：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Slice %1&lt;/b&gt;: %2</source>
        <translation>&lt;b&gt;切片 %1&lt;/b&gt;：%2</translation>
    </message>
    <message>
        <source>Select a node in the tree: its first failing tensor is shown here. Or double-click a column in Details to open that tensor.</source>
        <translation>在树中选择一个节点：这里显示它首个不达标的张量。也可以在详情中双击一列以打开该张量。</translation>
    </message>
    <message>
        <source>md5-mode dump: no tensors. These dumps were written with task &quot;statistics&quot; and summary_mode md5, so only checksums and statistics were saved; dump with task &quot;tensor&quot; to inspect values.</source>
        <translation>md5 模式的 dump：没有 tensor。这些 dump 以 task &quot;statistics&quot;、summary_mode md5 写出，只保存了校验和与统计量；要查看数值，请以 task &quot;tensor&quot; 进行 dump。</translation>
    </message>
    <message>
        <source>Statistics-mode dump: no tensors. These dumps were written with task &quot;statistics&quot;, so only the four statistics of each tensor were saved; dump with task &quot;tensor&quot; to inspect values.</source>
        <translation>统计量模式的 dump：没有 tensor。这些 dump 以 task &quot;statistics&quot; 写出，每个 tensor 只保存了四个统计量；要查看数值，请以 task &quot;tensor&quot; 进行 dump。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not a tensor (a scalar, a None argument or a leaf without data_name): there is no file to inspect.</source>
        <translation>“%1”不是 tensor（标量、None 参数或没有 data_name 的叶子）：没有可查看的文件。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::plotstyle</name>
    <message>
        <location filename="../../ui/inspect/plotstyle.cpp" line="+102"/>
        <source>Save PNG…</source>
        <translation>保存 PNG…</translation>
    </message>
    <message>
        <location line="+50"/>
        <location line="+7"/>
        <source>Save PNG</source>
        <translation>保存 PNG</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>PNG images (*.png)</source>
        <translation>PNG 图片 (*.png)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Could not write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
</context>
<context>
    <name>probescope::ui::RankMapView</name>
    <message>
        <source>rank \ step</source>
        <translation>rank \ step</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>step %1</translation>
    </message>
    <message>
        <source>Open a job with several steps or ranks to see the map.</source>
        <translation>打开包含多个 step 或 rank 的作业以查看分布图。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::RankOverviewPanel</name>
    <message>
        <source>Go to origin</source>
        <translation>转到源头</translation>
    </message>
    <message>
        <source>Show ranks, e.g. a communication group: 0-7, 1234</source>
        <translation>只显示这些 rank，例如一个通信组：0-7, 1234</translation>
    </message>
    <message>
        <source>%1: %2 (#%3), %4</source>
        <translation>%1：%2（#%3），%4</translation>
    </message>
    <message>
        <source>Carried on by communication:</source>
        <translation>经由以下通信传播：</translation>
    </message>
    <message>
        <source>Colour: worst verdict of the pair. Number: execution index of its first failure (✓ none). ▶ heavy frame: the job&apos;s origin. · pending, … running, × failed to compare, corner notch and dashed frame: salvaged from a damaged dump.</source>
        <translation>颜色：配对的最差结论。数字：其首个不达标节点的执行序号（✓ 表示没有）。▶ 粗框：作业偏差源头。· 等待，… 正在分析，× 比对失败，角标和虚线框：从损坏的 dump 中抢救。</translation>
    </message>
    <message>
        <source>sent</source>
        <translation>发出</translation>
    </message>
    <message>
        <source>received</source>
        <translation>接收</translation>
    </message>
    <message>
        <source>One run: red, where its first NaN/Inf is (▶ heavy frame: the first NaN/Inf) or reached; – no NaN/Inf origin; · a step after the first NaN/Inf's (not searched).</source>
        <translation>单次运行：红色为首个 NaN/Inf 所在（▶ 粗框：首个 NaN/Inf）或其到达之处；– 无 NaN/Inf 源头；· 首个 NaN/Inf 所在 step 之后的 step（未搜索）。</translation>
    </message>
</context>
<context>
    <name>DumpPreview</name>
    <message>
        <source>%1 holds two dumps at one step and rank:
%2</source>
        <translation>%1 在同一 step 和 rank 处有两份 dump：
%2</translation>
    </message>
    <message>
        <source>no step folder</source>
        <translation>无 step 目录</translation>
    </message>
    <message>
        <source>1 step (%1)</source>
        <translation>1 个 step（%1）</translation>
    </message>
    <message>
        <source>%1 steps (%2)</source>
        <translation>%1 个 step（%2）</translation>
    </message>
    <message>
        <source>no rank folder</source>
        <translation>无 rank 目录</translation>
    </message>
    <message>
        <source>1 rank (%1)</source>
        <translation>1 个 rank（%1）</translation>
    </message>
    <message>
        <source>%1 ranks (%2)</source>
        <translation>%1 个 rank（%2）</translation>
    </message>
    <message>
        <source>Found 1 dump · %1</source>
        <translation>找到 1 份 dump · %1</translation>
    </message>
    <message>
        <source>Found %1 dumps · %2</source>
        <translation>找到 %1 份 dump · %2</translation>
    </message>
    <message>
        <source>Found %1 × %2 · %3</source>
        <translation>找到 %1 × %2 · %3</translation>
    </message>
    <message>
        <source>NPU side: %1</source>
        <translation>NPU 侧：%1</translation>
    </message>
    <message>
        <source>Bench side: %1</source>
        <translation>标杆侧：%1</translation>
    </message>
    <message>
        <source> and %1 more</source>
        <translation> 等另外 %1 对</translation>
    </message>
    <message>
        <source>Will compare 1 pair: %1</source>
        <translation>将比对 1 对：%1</translation>
    </message>
    <message>
        <source>Will compare %1 pairs: %2</source>
        <translation>将比对 %1 对：%2</translation>
    </message>
</context>
<context>
    <name>probescope::ui::GraphFilePanel</name>
    <message>
        <source>&amp;Graph:</source>
        <translation>图(&amp;G)：</translation>
    </message>
    <message>
        <source>&amp;Micro step:</source>
        <translation>微步(&amp;M)：</translation>
    </message>
    <message>
        <source>No graph file is open.</source>
        <translation>未打开图文件。</translation>
    </message>
    <message numerus="yes">
        <source>&lt;b&gt;%1&lt;/b&gt; — %2 %3 graph%4, %n graph(s)</source>
        <translation>
            <numerusform>&lt;b&gt;%1&lt;/b&gt; — %2 %3 图%4，共 %n 个图</numerusform>
        </translation>
    </message>
    <message>
        <source>, task %1</source>
        <translation>，task %1</translation>
    </message>
    <message numerus="yes">
        <source>step %1 · rank %2 · %3 (%n node(s))</source>
        <translation>
            <numerusform>step %1 · rank %2 · %3（%n 个节点）</numerusform>
        </translation>
    </message>
    <message>
        <source>NPU</source>
        <translation>NPU</translation>
    </message>
    <message>
        <source>bench</source>
        <translation>标杆</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>%1: a build graph (no verdicts).</source>
        <translation>%1：构图结果（无判定）。</translation>
    </message>
    <message>
        <source>%1: no failing node.</source>
        <translation>%1：没有不达标节点。</translation>
    </message>
    <message>
        <source>%1: first failing node %2 (node_order %3).</source>
        <translation>%1：首个不达标节点 %2（node_order %3）。</translation>
    </message>
    <message>
        <source>&lt;p&gt;Select a node to see its data.&lt;/p&gt;</source>
        <translation>&lt;p&gt;选择一个节点以查看其数据。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>图</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>node_order</source>
        <translation>node_order</translation>
    </message>
    <message>
        <source>Micro step</source>
        <translation>微步</translation>
    </message>
    <message>
        <source>precision_index</source>
        <translation>precision_index</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>判定</translation>
    </message>
    <message>
        <source>no value</source>
        <translation>无值</translation>
    </message>
    <message>
        <source>Matched node</source>
        <translation>匹配节点</translation>
    </message>
    <message>
        <source>none (unmatched)</source>
        <translation>无（未匹配）</translation>
    </message>
    <message>
        <source>Manual match</source>
        <translation>手动匹配</translation>
    </message>
    <message>
        <source>yes (modified)</source>
        <translation>是（modified）</translation>
    </message>
    <message>
        <source>Parent</source>
        <translation>父节点</translation>
    </message>
    <message>
        <source>Children</source>
        <translation>子节点数</translation>
    </message>
    <message>
        <source>Overflow level</source>
        <translation>溢出等级</translation>
    </message>
    <message>
        <source>The node's data cannot be read:</source>
        <translation>无法读取该节点的数据：</translation>
    </message>
    <message>
        <source>input_data</source>
        <translation>input_data</translation>
    </message>
    <message>
        <source>output_data</source>
        <translation>output_data</translation>
    </message>
    <message>
        <source>Stack</source>
        <translation>堆栈</translation>
    </message>
    <message>
        <source>%1: no failing (red) node; the first warning (yellow) is %2 (node_order %3), selected.</source>
        <translation>%1：没有不达标（红色）节点；已选中首个警告（黄色）节点 %2（node_order %3）。</translation>
    </message>
    <message>
        <source>msprobe&apos;s legend</source>
        <translation>msprobe 图例</translation>
    </message>
</context>
<context>
    <name>probescope::ui::GraphFileModel</name>
    <message>
        <source>module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source>API</source>
        <translation>API</translation>
    </message>
    <message>
        <source>API collection</source>
        <translation>API 集合</translation>
    </message>
    <message>
        <source>unmatched</source>
        <translation>未匹配</translation>
    </message>
    <message>
        <source>bench</source>
        <translation>标杆</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>precision_index</source>
        <translation>precision_index</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>判定</translation>
    </message>
    <message>
        <source>msprobe: %1</source>
        <translation>msprobe：%1</translation>
    </message>
</context>
<context>
    <name>probescope::ui::TrendView</name>
    <message>
        <source>M&amp;odule:</source>
        <translation>模块(&amp;O)：</translation>
    </message>
    <message>
        <source>&amp;Slot:</source>
        <translation>槽位(&amp;S)：</translation>
    </message>
    <message>
        <source>M&amp;etric:</source>
        <translation>指标(&amp;E)：</translation>
    </message>
    <message>
        <source>S&amp;tatistic:</source>
        <translation>统计量(&amp;T)：</translation>
    </message>
    <message>
        <source>norm</source>
        <translation>norm</translation>
    </message>
    <message>
        <source>max</source>
        <translation>max</translation>
    </message>
    <message>
        <source>min</source>
        <translation>min</translation>
    </message>
    <message>
        <source>mean</source>
        <translation>mean</translation>
    </message>
    <message>
        <source>No .trend.db is open.</source>
        <translation>未打开 .trend.db。</translation>
    </message>
    <message numerus="yes">
        <source>&lt;b&gt;%1&lt;/b&gt; — msprobe data2db: %n step(s)</source>
        <translation>
            <numerusform>&lt;b&gt;%1&lt;/b&gt; — msprobe data2db：%n 个 step</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source> × %n rank(s)</source>
        <translation>
            <numerusform> × %n 个 rank</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source> × %n module(s)</source>
        <translation>
            <numerusform> × %n 个模块</numerusform>
        </translation>
    </message>
    <message>
        <source> (micro step %1)</source>
        <translation>（微步 %1）</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>step %1</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>not in the db for this step and rank</source>
        <translation>数据库中没有该 step 和 rank 的值</translation>
    </message>
    <message>
        <source>None</source>
        <translation>None</translation>
    </message>
    <message>
        <source>step</source>
        <translation>step</translation>
    </message>
    <message>
        <source>The dump of this run</source>
        <translation>本运行的 dump</translation>
    </message>
    <message>
        <source>Compare with a &amp;bench run…</source>
        <translation>与标杆运行比较(&amp;B)…</translation>
    </message>
    <message>
        <source>Overlay another run's monitor folder or .trend.db (NPU run against bench run)</source>
        <translation>叠加另一次运行的 monitor 文件夹或 .trend.db（NPU 运行对标杆运行）</translation>
    </message>
    <message>
        <source>&amp;Dump of this run…</source>
        <translation>本运行的 dump(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;Dump: %1</source>
        <translation>dump(&amp;D)：%1</translation>
    </message>
    <message>
        <source>Choose the run's dump root, to go from a step to its dump</source>
        <translation>选择该运行的 dump 根目录，以便从某个 step 跳到它的 dump</translation>
    </message>
    <message>
        <source>Open the step's d&amp;ump</source>
        <translation>打开该 step 的 dump(&amp;U)</translation>
    </message>
    <message>
        <source>Opens the selected cell's step and rank in the run's dump (also: double-click)</source>
        <translation>在该运行的 dump 中打开所选单元格的 step 和 rank（也可双击）</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Step</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>Rank</translation>
    </message>
    <message>
        <source>Metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source> — against the bench run &lt;b&gt;%1&lt;/b&gt;</source>
        <translation> — 对比标杆运行 &lt;b&gt;%1&lt;/b&gt;</translation>
    </message>
    <message>
        <source> (VPP stage %1)</source>
        <translation> （VPP stage %1）</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>bench run, %1</source>
        <translation>标杆运行，%1</translation>
    </message>
    <message>
        <source>anomalies</source>
        <translation>异常</translation>
    </message>
    <message numerus="yes">
        <source>&amp;Anomalies (%n):</source>
        <translation>
            <numerusform>异常(&amp;A)（%n）：</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>probescope::ui::GraphPane</name>
    <message>
        <source>No nodes on this side</source>
        <translation>这一侧没有节点</translation>
    </message>
    <message>
        <source>The graph appears when the compare has finished</source>
        <translation>比对完成后显示图</translation>
    </message>
    <message>
        <source>matched by hand with %1</source>
        <translation>已手动与 %1 匹配</translation>
    </message>
    <message>
        <source>matched with %1</source>
        <translation>与 %1 匹配</translation>
    </message>
</context>
<context>
    <name>probescope::ui::GraphView</name>
    <message>
        <source>Scroll together</source>
        <translation>同步滚动</translation>
    </message>
    <message>
        <source>Scroll both sides by the same amount.</source>
        <translation>两侧按相同距离一起滚动。</translation>
    </message>
    <message>
        <source>Click a node to select it and its match; Ctrl+click selects on one side only. To match by hand, select an NPU node and a bench node, then Ctrl+M (Ctrl+Shift+M with their children).</source>
        <translation>单击节点选中它及其匹配节点；Ctrl+单击只选中一侧。手动匹配：选中一个 NPU 节点和一个标杆节点，然后按 Ctrl+M（连同子节点按 Ctrl+Shift+M）。</translation>
    </message>
    <message>
        <source>&amp;Match selected nodes</source>
        <translation>匹配选中的节点(&amp;M)</translation>
    </message>
    <message>
        <source>Match the NPU node selected in the graph with the bench node selected there, and compare them.</source>
        <translation>将图中选中的 NPU 节点与选中的标杆节点匹配，并比对它们。</translation>
    </message>
    <message>
        <source>Match selected nodes with their &amp;children</source>
        <translation>连同子节点匹配选中的节点(&amp;C)</translation>
    </message>
    <message>
        <source>Match the two nodes and their calls, paired in execution order by name, and compare them.</source>
        <translation>匹配这两个节点及其调用（按执行顺序、按名称配对），并比对它们。</translation>
    </message>
    <message>
        <source>&amp;Unmatch</source>
        <translation>取消匹配(&amp;U)</translation>
    </message>
    <message>
        <source>Undo the manual match of the selected NPU node (forward and backward).</source>
        <translation>撤销选中 NPU 节点的手动匹配（前向和反向）。</translation>
    </message>
    <message>
        <source>Unmatch with children</source>
        <translation>连同子节点取消匹配</translation>
    </message>
    <message>
        <source>Undo the manual matches of the selected NPU node and of everything inside it.</source>
        <translation>撤销选中 NPU 节点及其内部所有节点的手动匹配。</translation>
    </message>
    <message>
        <source>NPU</source>
        <translation>NPU</translation>
    </message>
    <message>
        <source>Bench</source>
        <translation>标杆</translation>
    </message>
    <message>
        <source>Collapse</source>
        <translation>折叠</translation>
    </message>
    <message>
        <source>Expand</source>
        <translation>展开</translation>
    </message>
</context>
<context>
    <name>probescope::ui::GraphMatching</name>
    <message>
        <source>Save the manual matches into</source>
        <translation>将手动匹配保存到</translation>
    </message>
    <message>
        <source>Load manual matches</source>
        <translation>加载手动匹配</translation>
    </message>
    <message>
        <source>Manual matches (*.vis.config);;All files (*)</source>
        <translation>手动匹配 (*.vis.config);;所有文件 (*)</translation>
    </message>
    <message>
        <source>&amp;Graph view</source>
        <translation>图视图(&amp;G)</translation>
    </message>
    <message>
        <source>Show the NPU and bench graphs side by side beside the tree.</source>
        <translation>在树旁并排显示 NPU 图和标杆图。</translation>
    </message>
    <message>
        <source>&amp;Manual matching</source>
        <translation>手动匹配(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Save matches…</source>
        <translation>保存匹配(&amp;S)…</translation>
    </message>
    <message>
        <source>Write the manual matches of the shown pair as a tb_graph_ascend .vis.config.</source>
        <translation>将当前数据对的手动匹配写成 tb_graph_ascend 的 .vis.config。</translation>
    </message>
    <message>
        <source>&amp;Load matches…</source>
        <translation>加载匹配(&amp;L)…</translation>
    </message>
    <message>
        <source>Read a .vis.config (tb_graph_ascend&apos;s manual matches) and compare the shown pair with them.</source>
        <translation>读取 .vis.config（tb_graph_ascend 的手动匹配），并用它重新比对当前数据对。</translation>
    </message>
    <message>
        <source>Wait for the compare to finish before matching.</source>
        <translation>请等比对完成后再匹配。</translation>
    </message>
    <message>
        <source>Manual matching pairs msprobe dump entries; a ptdbg .pkl pair has none.</source>
        <translation>手动匹配配对的是 msprobe 的 dump 条目；ptdbg 的 .pkl 数据对没有这类条目。</translation>
    </message>
    <message>
        <source>Matched %1 with %2 (%3 manual matches in force); comparing again…</source>
        <translation>已将 %1 与 %2 匹配（共 %3 个手动匹配生效）；正在重新比对…</translation>
    </message>
    <message>
        <source>%1 has no manual match to undo.</source>
        <translation>%1 没有可撤销的手动匹配。</translation>
    </message>
    <message>
        <source>Unmatched %1; comparing again…</source>
        <translation>已取消 %1 的匹配；正在重新比对…</translation>
    </message>
    <message>
        <source>Matches not saved: %1</source>
        <translation>匹配未保存：%1</translation>
    </message>
    <message>
        <source>Save matches</source>
        <translation>保存匹配</translation>
    </message>
    <message>
        <source>Manual matches saved to %1</source>
        <translation>手动匹配已保存到 %1</translation>
    </message>
    <message>
        <source>Matches not loaded: %1</source>
        <translation>匹配未加载：%1</translation>
    </message>
    <message>
        <source>Load matches</source>
        <translation>加载匹配</translation>
    </message>
    <message>
        <source>Wait for the compare to finish before loading matches.</source>
        <translation>请等比对完成后再加载匹配。</translation>
    </message>
    <message>
        <source>%1 manual match(es) loaded from %2; comparing again…</source>
        <translation>已从 %2 加载 %1 个手动匹配；正在重新比对…</translation>
    </message>
    <message>
        <source>%1 entr(ies) left out: %2</source>
        <translation>%1 个条目未采用：%2</translation>
    </message>
    <message>
        <source>Matched %1 with %2 (%3 manual matches in force).</source>
        <translation>已将 %1 与 %2 匹配（当前共 %3 个手动匹配）。</translation>
    </message>
    <message>
        <source>Unmatched %1 (%2 manual matches undone, %3 in force).</source>
        <translation>已取消 %1 的匹配（撤销 %2 个手动匹配，当前共 %3 个）。</translation>
    </message>
    <message>
        <source>Nothing in %1 names nodes of this pair; the %2 manual matches in force stay.</source>
        <translation>%1 中没有本配对的节点；当前的 %2 个手动匹配保持不变。</translation>
    </message>
    <message>
        <source>%1 entries left out, the first: %2</source>
        <translation>%1 个条目被略过，第一个：%2</translation>
    </message>
    <message>
        <source>%1 manual matches loaded from %2</source>
        <translation>已从 %2 载入 %1 个手动匹配</translation>
    </message>
    <message>
        <source>, replacing the %1 in force.</source>
        <translation>，替换了当前的 %1 个。</translation>
    </message>
    <message>
        <source>Comparing again…</source>
        <translation>正在重新比对…</translation>
    </message>
</context>
<context>
    <name>probescope::ui::CheckpointModel</name>
    <message>
        <source>only in the first checkpoint</source>
        <translation>仅在第一个检查点中</translation>
    </message>
    <message>
        <source>only in the second checkpoint</source>
        <translation>仅在第二个检查点中</translation>
    </message>
    <message>
        <source>Parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>cos</source>
        <translation>cos</translation>
    </message>
    <message>
        <source>l2</source>
        <translation>l2</translation>
    </message>
    <message>
        <source>numel</source>
        <translation>numel</translation>
    </message>
    <message>
        <source>shape</source>
        <translation>shape</translation>
    </message>
</context>
<context>
    <name>probescope::ui::CommMergeModel</name>
    <message>
        <source>Communication op</source>
        <translation>通信算子</translation>
    </message>
</context>
<context>
    <name>probescope::ui::CommMergePanel</name>
    <message>
        <source>(no step)</source>
        <translation>（无 step）</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>step %1</translation>
    </message>
    <message>
        <source>Open a job (several ranks) to see its communication ops side by side.</source>
        <translation>打开一个作业（多个 rank）即可并排查看其通信算子。</translation>
    </message>
    <message>
        <source>%1 of %2 ranks of this step compared so far.</source>
        <translation>本 step 已比对 %2 个 rank 中的 %1 个。</translation>
    </message>
    <message>
        <source>No communication op (Distributed.*) in this step&apos;s compare results.</source>
        <translation>本 step 的比对结果中没有通信算子（Distributed.*）。</translation>
    </message>
    <message>
        <source>merge_result&apos;s table for this step: %1 communication rows over %2 ranks.</source>
        <translation>本 step 的 merge_result 表：%1 行通信数据，共 %2 个 rank。</translation>
    </message>
    <message>
        <source>S&amp;tep:</source>
        <translation>Step(&amp;T)：</translation>
    </message>
    <message>
        <source>&amp;Metric:</source>
        <translation>指标(&amp;M)：</translation>
    </message>
    <message>
        <source>The same table as probescope-cli merge_result, made from this job&apos;s compare results</source>
        <translation>与 probescope-cli merge_result 相同的表，由本作业的比对结果生成</translation>
    </message>
</context>
<context>
    <name>probescope::ui::SetupCheckPage</name>
    <message>
        <source>Check setup — ProbeScope</source>
        <translation>检查配置 — ProbeScope</translation>
    </message>
    <message>
        <source>Before comparing precision, check that the two runs are set up alike: open two config_check packs (.zip), two checkpoints (folders with iter_* or mp_rank_*), or two runs&apos; folders with their pack beside the dumps.</source>
        <translation>比对精度之前，先检查两次训练的配置是否一致：打开两个 config_check 配置包（.zip）、两个检查点（含 iter_* 或 mp_rank_* 的文件夹），或两次训练的文件夹（配置包位于 dump 旁边）。</translation>
    </message>
    <message>
        <source>&amp;Bench:</source>
        <translation>标杆(&amp;B)：</translation>
    </message>
    <message>
        <source>C&amp;ompared:</source>
        <translation>待比对(&amp;O)：</translation>
    </message>
    <message>
        <source>pack .zip, checkpoint folder or run folder</source>
        <translation>配置包 .zip、检查点文件夹或训练文件夹</translation>
    </message>
    <message>
        <source>Zip…</source>
        <translation>Zip…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>&amp;Check</source>
        <translation>检查(&amp;C)</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Summary — the likely cause first; select a check to see its rows:</source>
        <translation>汇总 — 最可能的原因排在最前；选择一项检查以查看其明细：</translation>
    </message>
    <message>
        <source>Rows of %1 — errors first, then warnings:</source>
        <translation>%1 的明细 — 先错误，后警告：</translation>
    </message>
    <message>
        <source>%1 parameters in both, %2 only in the first, %3 only in the second. Sorted by cos, lowest first; click a column to sort by l2.</source>
        <translation>两者共有 %1 个参数，仅第一个有 %2 个，仅第二个有 %3 个。按 cos 从低到高排序；点击列标题可按 l2 排序。</translation>
    </message>
    <message>
        <source>Checkpoint or run folder</source>
        <translation>检查点或训练文件夹</translation>
    </message>
    <message>
        <source>config_check pack</source>
        <translation>config_check 配置包</translation>
    </message>
    <message>
        <source>config_check packs (*.zip)</source>
        <translation>config_check 配置包 (*.zip)</translation>
    </message>
    <message>
        <source>Give both inputs first.</source>
        <translation>请先给出两个输入。</translation>
    </message>
    <message>
        <source>Checking…</source>
        <translation>正在检查…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Cancelled; the previous result, if any, is still shown.</source>
        <translation>已取消；如有上一次的结果，仍然显示。</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Cannot check: %1</source>
        <translation>无法检查：%1</translation>
    </message>
    <message>
        <source>Packs: %1 ↔ %2</source>
        <translation>配置包：%1 ↔ %2</translation>
    </message>
    <message>
        <source>Checkpoints: %1 ↔ %2</source>
        <translation>检查点：%1 ↔ %2</translation>
    </message>
</context>
<context>
    <name>probescope::ui::SetupSummaryModel</name>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%2 行中 %1 行</translation>
    </message>
    <message>
        <source>environment variables (NPU names matched with their GPU counterparts)</source>
        <translation>环境变量（NPU 变量与对应的 GPU 变量匹配）</translation>
    </message>
    <message>
        <source>versions of the packages training depends on</source>
        <translation>训练依赖的软件包版本</translation>
    </message>
    <message>
        <source>launch-script and YAML arguments (aliases and similar names matched)</source>
        <translation>启动脚本与 YAML 中的参数（按别名和相近名称匹配）</translation>
    </message>
    <message>
        <source>each step&apos;s and rank&apos;s input batches (statistics)</source>
        <translation>每个 step、每个 rank 的输入数据（统计量）</translation>
    </message>
    <message>
        <source>each step&apos;s and rank&apos;s weights (statistics)</source>
        <translation>每个 step、每个 rank 的权重（统计量）</translation>
    </message>
    <message>
        <source>random calls: where they are made and how often</source>
        <translation>随机调用：调用位置与次数</translation>
    </message>
    <message>
        <source>Open to see the %1 rows</source>
        <translation>打开以查看 %1 的明细</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Rows flagged</source>
        <translation>标记行数</translation>
    </message>
    <message>
        <source>Compares</source>
        <translation>比对内容</translation>
    </message>
</context>
<context>
    <name>probescope::ui::AnomalyChainModel</name>
    <message>
        <source>origin: inputs finite, output NaN/Inf</source>
        <translation>源头：输入有限，输出为 NaN/Inf</translation>
    </message>
    <message>
        <source>first NaN/Inf output on this rank</source>
        <translation>本 rank 第一个输出 NaN/Inf 的节点</translation>
    </message>
    <message>
        <source>Double-click (or O / P) to show %1 in rank %2's tree</source>
        <translation>双击（或按 O / P）在 rank %2 的树中显示 %1</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>Rank</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>In the chain</source>
        <translation>在链中的位置</translation>
    </message>
    <message>
        <source>1st NaN</source>
        <translation>首个 NaN</translation>
    </message>
    <message>
        <source>The first NaN/Inf of the run (overflow_check): its inputs are finite, its output is not.</source>
        <translation>本次运行的第一个 NaN/Inf（overflow_check）：输入有限，输出不是。</translation>
    </message>
    <message>
        <source>NaN here</source>
        <translation>NaN 到达</translation>
    </message>
    <message>
        <source>Where the run's first NaN/Inf reached this rank: the first output with a NaN/Inf here.</source>
        <translation>本次运行的第一个 NaN/Inf 到达本 rank 之处：本 rank 第一个含 NaN/Inf 的输出。</translation>
    </message>
    <message>
        <source>NaN/Inf</source>
        <translation>NaN/Inf</translation>
    </message>
    <message>
        <source>Inputs and outputs hold NaN/Inf (Max/Min).</source>
        <translation>输入和输出都含 NaN/Inf（Max/Min）。</translation>
    </message>
    <message>
        <source>An output holds NaN/Inf (Max/Min); the inputs are finite.</source>
        <translation>有输出含 NaN/Inf（Max/Min）；输入有限。</translation>
    </message>
    <message>
        <source>in NaN/Inf</source>
        <translation>输入 NaN/Inf</translation>
    </message>
    <message>
        <source>An input holds NaN/Inf (Max/Min); the outputs are finite.</source>
        <translation>有输入含 NaN/Inf（Max/Min）；输出有限。</translation>
    </message>
    <message>
        <source>No statistics</source>
        <translation>无统计量</translation>
    </message>
    <message>
        <source>Finite</source>
        <translation>有限</translation>
    </message>
    <message>
        <source>NaN/Inf input</source>
        <translation>输入含 NaN/Inf</translation>
    </message>
    <message>
        <source>NaN/Inf output</source>
        <translation>输出含 NaN/Inf</translation>
    </message>
    <message>
        <source>NaN/Inf reached here</source>
        <translation>NaN/Inf 到达此处</translation>
    </message>
    <message>
        <source>First NaN/Inf</source>
        <translation>首个 NaN/Inf</translation>
    </message>
    <message>
        <source>The dump has no statistics of its own for this node.</source>
        <translation>dump 中没有此节点自身的统计量。</translation>
    </message>
    <message>
        <source>Its inputs and outputs are finite (Max/Min).</source>
        <translation>输入和输出都有限（Max/Min）。</translation>
    </message>
    <message>
        <source>An output holds NaN/Inf (Max/Min).</source>
        <translation>有输出含 NaN/Inf（Max/Min）。</translation>
    </message>
</context>
<context>
    <name>probescope::ui::TrendGridModel</name>
    <message>
        <source>None</source>
        <translation>None</translation>
    </message>
    <message>
        <source>not in the db for this step and rank</source>
        <translation>db 中没有该 step 和 rank 的数据</translation>
    </message>
    <message>
        <source>step %1, rank %2: %3</source>
        <translation>step %1，rank %2：%3</translation>
    </message>
    <message>
        <source>bench run: %1</source>
        <translation>标杆运行：%1</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>relative difference: %1</source>
        <translation>相对差异：%1</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>step %1</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
</context>
</TS>
