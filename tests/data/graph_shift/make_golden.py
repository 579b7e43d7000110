#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Makes golden.json from the .vis.db msprobe 26.0.0 wrote for the shifted-call pair (see README.md):
#   python3 make_golden.py MSPROBE.vis.db [NAME_PART [SOURCE]] > golden.json
# Kept: per tb_nodes row its id, precision_index and matched_node_link; for the rows whose node name holds NAME_PART
# (default "gelu": the shifted call) also input_data and output_data as msprobe wrote them. Sorted by id.
import json
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
part = sys.argv[2] if len(sys.argv) > 2 else "gelu"
source = sys.argv[3] if len(sys.argv) > 3 else "msprobe 26.0.0 graph_visualize -fm"
rows = []
for node_id, precision, link, name, inputs, outputs in db.execute(
        "SELECT id, precision_index, matched_node_link, node_name, input_data, output_data FROM tb_nodes ORDER BY id"):
    row = {"id": node_id, "precision_index": precision, "matched_node_link": json.loads(link)}
    if part in name:
        row["input_data"] = json.loads(inputs)
        row["output_data"] = json.loads(outputs)
    rows.append(row)
print(json.dumps({"source": source, "rows": rows}, indent=1, sort_keys=True))
