# SPDX-License-Identifier: Apache-2.0
# Writes tests/data/ptdbg/edge/{npu,bench}/rank0/{dump.pkl,dump/*.npy}: ptdbg 6.0-style dumps of tensors chosen to
# reach the corners of ptdbg's compare_by_op (zeros in the bench, inf/nan at equal and at different positions,
# float16, int32, bool, 0-d, empty, one-element tensors, an API without bench, a huge MaxAbsErr).
# Run with Debian's python3 + python3-numpy from tests/data/ptdbg; see tests/data/ptdbg/README.md.
import json, os, shutil, numpy as np

S = 'edge'
def write(p, rs):
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, 'w') as f:
        for r in rs: f.write(json.dumps(r) + '\n')
# D: numeric edge cases
def T(name, arr):
    a=np.asarray(arr)
    if a.dtype==np.bool_ or a.size==0: s=[[],[],[],'Nan']
    else:
        f=a.astype(np.float64); s=[float(np.max(f)), float(np.min(f)), float(np.mean(f)), float(np.linalg.norm(f)) if a.dtype.kind=='f' else 'Nan']
    return name, a, [name, 0, [], 'torch.'+str(a.dtype).replace('bool','bool'), list(a.shape), s]
rng=np.random.default_rng(5)
cases={}
def add(api, ins, outs_n, outs_b):
    cases[api]=(ins, outs_n, outs_b)
x=rng.standard_normal(16).astype(np.float32)
z=x.copy(); z[::3]=0
add('Torch.add.0.forward', [x, z], [z+np.float32(1e-4)], [z])
xi=np.array([1,np.inf,3,np.nan],dtype=np.float32)
add('Torch.mul.0.forward', [xi], [xi*2], [xi*2+np.float32(1e-3)])
add('Torch.sub.0.forward', [xi], [np.array([1,2,np.inf,4],dtype=np.float32)], [np.array([1,np.inf,3,4],dtype=np.float32)])
h=rng.standard_normal(8).astype(np.float16); hz=h.copy(); hz[2]=0
add('Torch.div.0.forward', [h], [hz+np.float16(0.01)], [hz])
iv=np.array([0,1,2,3],dtype=np.int32)
add('Torch.floor.0.forward', [iv], [iv+1], [iv])
bv=np.array([True,False,True])
add('Torch.eq.0.forward', [bv], [bv], [~bv])
add('Torch.sum.0.forward', [x], [np.float16(3.5)], [np.float16(3.25)])
add('Torch.mean.0.forward', [x], [np.zeros(0,dtype=np.float32)], [np.zeros(0,dtype=np.float32)])
add('Torch.max.0.forward', [x], [np.array([2.0],dtype=np.float32)], [np.array([1.0],dtype=np.float32)])
add('Torch.min.0.forward', [x], [np.zeros(4,dtype=np.float32)], [np.ones(4,dtype=np.float32)])
add('Torch.split.0.forward', [x], [x[:8], x[8:]*3], [x[:8]])   # npu has one more output
add('Torch.abs.0.forward', [x*1e12], [x*1e12+1e10], [x*1e12])
for side in ('npu','bench'):
    d=f'{S}/{side}/rank0'
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(d+'/dump')
    out=[]
    for api,(ins,on,ob) in cases.items():
        outs = on if side=='npu' else ob
        for i,a in enumerate(ins):
            n,arr,row=T(f'{api}.input.{i}', a); out.append(row); np.save(f'{d}/dump/{n}.npy', arr)
        for i,a in enumerate(outs):
            nm=f'{api}.output' if len(outs)==1 and len(on)==1 else f'{api}.output.{i}'
            n,arr,row=T(nm, a); out.append(row); np.save(f'{d}/dump/{n}.npy', arr)
    write(d+'/dump.pkl', out)
