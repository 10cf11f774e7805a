// Row resolution: the row options (offset, positions, paddingMask, paddingIdx) of one call and its
// row count -> which positions the rows have, as the core's RowPositions takes them.

import { checkFlags, checkNumber, checkNumberList, float64Entries, rangeError } from './check.js';

export const ROW_OPTIONS = ['offset', 'positions', 'paddingMask', 'paddingIdx'];

/**
 * The row helpers of one instance: { resolveRows, checkLength }.
 * resolveRows(fn, spec, length, options) returns { count, first, positions: Float64Array|null,
 * zeroRows: Uint8Array|null, zeroPosition, numbered } or throws: consecutive rows from first,
 * explicit positions, or (numbered) a padding mask in zeroRows around which the core numbers the
 * other rows from first.
 */
export function createRows(core) {
  const { maxPosition, maxElements } = core.limits;

  function resolveRows(fn, spec, length, options) {
    if (options.positions !== undefined && (options.offset !== undefined || options.paddingMask !== undefined)) {
      throw new TypeError(`posenc.${fn}: give either positions or offset/paddingMask, not both`);
    }
    const fairseq = spec.preset.usesPaddingIdx;
    let paddingIdx = 1;
    if (options.paddingIdx !== undefined) {
      if (!fairseq) {
        throw new TypeError(`posenc.${fn}: paddingIdx applies only to preset 'fairseq' (its positions start at paddingIdx + 1)`);
      }
      paddingIdx = checkNumber(fn, 'paddingIdx', options.paddingIdx, { integer: true, min: 0, max: maxPosition - 1 });
    }
    const origin = fairseq ? paddingIdx + 1 : spec.preset.firstPosition;
    const zeroPosition = fairseq ? paddingIdx : -1;
    const offset =
      options.offset === undefined ? 0 : checkNumber(fn, 'offset', options.offset, { min: 0, max: maxPosition });
    const rows = { count: length, first: origin + offset, positions: null, zeroRows: null, zeroPosition, numbered: false };

    if (options.positions !== undefined) {
      const list = checkNumberList(fn, 'positions', options.positions, length);
      rows.positions = float64Entries(fn, 'positions', list, length, {
        min: 0,
        max: maxPosition,
        expected: `a finite number from 0 to ${maxPosition}`,
      });
    } else if (options.paddingMask !== undefined) {
      // The core numbers the rows around the mask (posenc::number_around_padding, fairseq's
      // make_positions); here only the check whose message names offset.
      const mask = checkNumberList(fn, 'paddingMask', options.paddingMask, length);
      const zeroRows = checkFlags(fn, 'paddingMask', mask, '1 = padding');
      let nonPadding = 0;
      for (let r = 0; r < length; r++) nonPadding += 1 - zeroRows[r];
      if (rows.first + nonPadding - 1 > maxPosition) {
        throw rangeError(fn, 'offset', `such that every position is at most ${maxPosition}`, offset);
      }
      rows.zeroRows = zeroRows;
      rows.numbered = true;
    } else if (rows.first + length - 1 > maxPosition) {
      throw rangeError(fn, 'offset', `such that offset + length - 1 is at most ${maxPosition}`, offset);
    }
    return rows;
  }

  /** length: an integer from 1 with length * width at most maxElements. */
  function checkLength(fn, length, width) {
    checkNumber(fn, 'length', length, { integer: true, min: 1, max: maxElements });
    if (length * width > maxElements) {
      throw new RangeError(`posenc.${fn}: length * dim must be at most ${maxElements} elements, got ${length} x ${width}`);
    }
  }

  return { resolveRows, checkLength };
}
