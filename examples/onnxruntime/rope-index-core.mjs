// posenc's ropeIndex (posenc/multimodal) feeding an ONNX graph: the position_ids of a Qwen2-VL
// batch as an int64 tensor [3, batch, seq], handed to onnxruntime-web without a copy, into
// tests/fixtures/onnxruntime/mrope_qwen2vl.onnx (the model's rotary embedding: position_ids ->
// cos, sin [batch, seq, 16] after mrope_section's selection), checked against posenc's own
// multimodal cosSin. Shared by rope-index.mjs (Node), browser.mjs and the test; no Node or DOM
// imports: `ort`, `ropeIndex` and `pe` are passed in.

/**
 * Tokenizer-style inputs (as transformers.js' tokenizer returns them): int64 tensors [batch, seq].
 * @param {number[][]} rows equal lengths (padded)
 */
export function int64Tensor(ort, rows) {
  const data = BigInt64Array.from(rows.flat(), BigInt);
  return new ort.Tensor('int64', data, [rows.length, rows[0].length]);
}

/**
 * ropeIndex's position ids of a batch as an ort.Tensor int64 [3, batch, seq] (t plane, h plane,
 * w plane: HF's order), made from ropeIndex's `{ data, dims, type }` without copying `data`, and
 * the rope deltas [batch, 1].
 */
export function positionIds(ort, ropeIndex, config, { inputIds, attentionMask, imageGridThw }) {
  const { positions, ropeDeltas } = ropeIndex(config, {
    inputIds, // ort.Tensor int64 [B, L]: read in place
    attentionMask,
    imageGridThw,
    dtype: 'int64', // BigInt64Array: what an int64 graph input takes
    as: 'tensor', // { data, dims: [3, B, L], type: 'int64' }
  });
  const tensor = new ort.Tensor(positions.type, positions.data, positions.dims);
  return { tensor, source: positions, ropeDeltas, copied: tensor.data !== positions.data };
}

/**
 * The whole path on mrope_qwen2vl.json (parsed): token ids and mask as int64 tensors -> ropeIndex
 * -> ort.Tensor -> the graph; returns what the example prints and the test checks.
 */
export async function runRopeIndex(ort, ropeIndex, pe, session, fixture) {
  const inputIds = int64Tensor(ort, fixture.inputIds);
  const attentionMask = int64Tensor(ort, fixture.attentionMask);
  const { tensor, ropeDeltas, copied } = positionIds(ort, ropeIndex, fixture.config, {
    inputIds,
    attentionMask,
    imageGridThw: fixture.imageGridThw,
  });
  const length = tensor.dims[2];
  const out = await session.run({ position_ids: tensor });
  const rot = pe.rotary({ config: fixture.config }); // the same config.json: mrope_section [2, 3, 3]
  let mine;
  try {
    // The int64 [3, B, L] tensor as it is: cos / sin [B, L, headDim], one sequence after another.
    mine = rot.cosSin(length, { positions: tensor });
  } finally {
    rot.dispose();
  }
  return {
    inputIds: { type: inputIds.type, dims: inputIds.dims },
    positionIds: { type: tensor.type, dims: tensor.dims, data: tensor.data, copied },
    ropeDeltas: { type: ropeDeltas.type, dims: ropeDeltas.dims, data: ropeDeltas.data },
    graphInputs: session.inputMetadata ?? null,
    cos: out.cos,
    sin: out.sin,
    posenc: mine,
  };
}
