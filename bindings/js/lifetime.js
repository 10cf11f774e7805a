// Objects that own wasm memory (encoders, layers, models): dispose(), [Symbol.dispose] where the
// engine has it, a `disposed` flag, an Error on use after dispose, and a FinalizationRegistry as a
// backstop that frees what a forgotten object owned.
//
// The owned `handle` is anything with delete(): an embind object (3.1.6's have no Symbol.dispose)
// or a small wrapper around several. The registry holds only the handle, never the object.

const registry =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((handle) => handle.delete()) : null;

/**
 * Gives `object` dispose(), [Symbol.dispose]() and a `disposed` getter, registers it for the
 * backstop, and returns live(method): the handle, or an Error with disposedMessage(method) once
 * the object was disposed. Call it before freezing `object`.
 */
export function ownHandle(object, handle, disposedMessage) {
  let owned = handle;
  const token = {};
  Object.defineProperty(object, 'disposed', { get: () => owned === null, enumerable: true });
  object.dispose = function dispose() {
    if (owned === null) return;
    registry?.unregister(token);
    owned.delete();
    owned = null;
  };
  if (typeof Symbol.dispose === 'symbol') object[Symbol.dispose] = object.dispose;
  registry?.register(object, handle, token);
  return function live(method) {
    if (owned === null) throw new Error(disposedMessage(method));
    return owned;
  };
}
