// A one-node ONNX model written as protobuf bytes, for the benchmarks that run an operator of
// onnxruntime-web on its own (RotaryEmbedding) without Python or the onnx package. Only the
// fields such a model needs are written; field numbers are those of onnx/onnx.proto (ModelProto,
// GraphProto, NodeProto, AttributeProto, ValueInfoProto, TypeProto, TensorShapeProto).

const FLOAT = 1; // TensorProto.DataType
const INT64 = 7;
export const DTYPE = { float32: FLOAT, int64: INT64 };

class Writer {
  constructor() {
    this.bytes = [];
  }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v));
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n) b |= 0x80;
      this.bytes.push(b);
    } while (n);
    return this;
  }
  key(field, wire) {
    return this.varint((field << 3) | wire);
  }
  int(field, v) {
    return this.key(field, 0).varint(v);
  }
  raw(field, data) {
    this.key(field, 2).varint(data.length);
    for (const b of data) this.bytes.push(b);
    return this;
  }
  string(field, s) {
    return this.raw(field, new TextEncoder().encode(s));
  }
  message(field, build) {
    const w = new Writer();
    build(w);
    return this.raw(field, w.bytes);
  }
}

// ValueInfoProto { name = 1, type = 2 { tensor_type = 1 { elem_type = 1, shape = 2 { dim = 1 } } } }
function valueInfo(w, name, type, shape) {
  w.string(1, name);
  w.message(2, (t) =>
    t.message(1, (tt) => {
      tt.int(1, DTYPE[type]);
      tt.message(2, (s) => {
        for (const d of shape) s.message(1, (dim) => dim.int(1, d));
      });
    }),
  );
}

/**
 * The bytes of a model with one node.
 * @param {object} o
 * @param {string} o.opType        e.g. 'RotaryEmbedding'
 * @param {string} [o.domain]      '' (the ONNX domain) or 'com.microsoft'
 * @param {number} o.opset         the opset version of that domain
 * @param {Array<[string, string, number[]]>} o.inputs   [name, 'float32' | 'int64', shape]
 * @param {Array<[string, string, number[]]>} o.outputs
 * @param {Record<string, number>} [o.intAttributes]
 */
export function oneNodeModel({ opType, domain = '', opset, inputs, outputs, intAttributes = {} }) {
  const m = new Writer();
  m.int(1, 8); // ir_version
  m.message(8, (o) => o.string(1, '').int(2, domain === '' ? opset : 17)); // opset_import (ONNX)
  if (domain !== '') m.message(8, (o) => o.string(1, domain).int(2, opset));
  m.message(7, (g) => {
    g.message(1, (n) => {
      for (const [name] of inputs) n.string(1, name);
      for (const [name] of outputs) n.string(2, name);
      n.string(3, 'node');
      n.string(4, opType);
      for (const [name, value] of Object.entries(intAttributes)) {
        n.message(5, (a) => a.string(1, name).int(3, value).int(20, 2)); // AttributeProto: i, type INT
      }
      if (domain !== '') n.string(7, domain);
    });
    g.string(2, 'graph');
    for (const [name, type, shape] of inputs) g.message(11, (v) => valueInfo(v, name, type, shape));
    for (const [name, type, shape] of outputs) g.message(12, (v) => valueInfo(v, name, type, shape));
  });
  return new Uint8Array(m.bytes);
}
