// Moving a tree between the browser and the user's disk as a folder of
// markdown: read a picked folder (File System Access API, or the file list
// of <input type="file" webkitdirectory>), write one back, or pack a zip
// where no folder can be written. Pairs with ArborMemory.exportFiles and
// importFiles; plain functions with no engine inside.

/** @typedef {import('./index.d.ts').TreeFile} TreeFile */

// Each export is typed with its declaration in folder.d.ts (`@type`), so
// that `npm run typecheck` fails when the two disagree.

/**
 * The files of `<input type="file" webkitdirectory>` (or a drop), with
 * the picked folder's own name taken off their paths.
 *
 * @type {typeof import('./folder.d.ts').filesFromFileList}
 */
export async function filesFromFileList(fileList) {
  const files = Array.from(fileList);
  const rel = files.map((f) => f.webkitRelativePath || f.name);
  // All paths share the picked folder as their first segment.
  const strip = rel.length > 0 && rel.every((r) => r.includes('/') && r.split('/')[0] === rel[0].split('/')[0]);
  return Promise.all(
    files.map(async (f, i) => ({
      path: strip ? rel[i].slice(rel[i].indexOf('/') + 1) : rel[i],
      data: new Uint8Array(await f.arrayBuffer()),
    })),
  );
}

/**
 * Every file below a directory handle from `showDirectoryPicker()`.
 *
 * @type {typeof import('./folder.d.ts').filesFromDirectory}
 */
export async function filesFromDirectory(dir) {
  /** @type {TreeFile[]} */
  const out = [];
  /**
   * @param {FileSystemDirectoryHandle} handle
   * @param {string} prefix
   */
  const walk = async (handle, prefix) => {
    for await (const [name, child] of handle.entries()) {
      const p = prefix + name;
      // Casts: `kind` says which handle it is (FileSystemHandle is not a union the check narrows).
      if (child.kind === 'directory') await walk(/** @type {FileSystemDirectoryHandle} */ (child), `${p}/`);
      else out.push({ path: p, data: new Uint8Array(await (await /** @type {FileSystemFileHandle} */ (child).getFile()).arrayBuffer()) });
    }
  };
  await walk(dir, '');
  return out;
}

/**
 * Writes `files` below a directory handle opened for writing
 * (`showDirectoryPicker({ mode: 'readwrite' })`), creating folders.
 *
 * @type {typeof import('./folder.d.ts').filesToDirectory}
 */
export async function filesToDirectory(dir, files) {
  for (const { path, data } of files) {
    const parts = path.split('/');
    let handle = dir;
    for (const part of parts.slice(0, -1)) handle = await handle.getDirectoryHandle(part, { create: true });
    const file = await handle.getFileHandle(/** @type {string} */ (parts.at(-1)), { create: true }); // cast: split gives at least one part
    const w = await file.createWritable();
    // Cast: lib.dom's write() takes no view of a SharedArrayBuffer, which
    // Uint8Array admits in its type; the browser is left to refuse one, as before.
    await w.write(/** @type {string | Uint8Array<ArrayBuffer>} */ (data));
    await w.close();
  }
}

/**
 * A zip archive of `files` (stored, not compressed: markdown is small and
 * every unzip tool reads it).
 *
 * `options.date`: the modification time written for every file (default: now).
 *
 * @type {typeof import('./folder.d.ts').zipFiles}
 */
export function zipFiles(files, { date = new Date() } = {}) {
  const enc = new TextEncoder();
  const dosTime = (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1);
  const dosDate = ((Math.max(date.getFullYear(), 1980) - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate();
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const file of files) {
    const data = typeof file.data === 'string' ? enc.encode(file.data) : file.data;
    const name = enc.encode(file.path);
    const crc = crc32(data);
    // Info-ZIP's Unicode Path field repeats the UTF-8 name for unzip
    // tools that ignore flag bit 11 (Info-ZIP's unzip 6 among them).
    const extra = new DataView(new ArrayBuffer(9 + name.length));
    extra.setUint16(0, 0x7075, true);
    extra.setUint16(2, 5 + name.length, true);
    extra.setUint8(4, 1);
    extra.setUint32(5, crc32(name), true);
    new Uint8Array(extra.buffer).set(name, 9);
    const extraBytes = new Uint8Array(extra.buffer);
    // Version 2.0, flag bit 11: the name is UTF-8; method 0: stored.
    const common = [20, 0x0800, 0, dosTime, dosDate];
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    common.forEach((v, i) => local.setUint16(4 + 2 * i, v, true));
    local.setUint32(14, crc, true);
    local.setUint32(18, data.length, true);
    local.setUint32(22, data.length, true);
    local.setUint16(26, name.length, true);
    local.setUint16(28, extraBytes.length, true);
    const central = new DataView(new ArrayBuffer(46));
    central.setUint32(0, 0x02014b50, true);
    central.setUint16(4, 20, true);
    common.forEach((v, i) => central.setUint16(6 + 2 * i, v, true));
    central.setUint32(16, crc, true);
    central.setUint32(20, data.length, true);
    central.setUint32(24, data.length, true);
    central.setUint16(28, name.length, true);
    central.setUint16(30, extraBytes.length, true);
    central.setUint32(42, offset, true);
    locals.push(new Uint8Array(local.buffer), name, extraBytes, data);
    centrals.push(new Uint8Array(central.buffer), name, extraBytes);
    offset += 30 + name.length + extraBytes.length + data.length;
  }
  const size = centrals.reduce((n, b) => n + b.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, files.length, true);
  end.setUint16(10, files.length, true);
  end.setUint32(12, size, true);
  end.setUint32(16, offset, true);
  const parts = [...locals, ...centrals, new Uint8Array(end.buffer)];
  const out = new Uint8Array(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of parts) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/** @type {number[] | null} */
let crcTable = null;

/** @param {Uint8Array} bytes */
function crc32(bytes) {
  crcTable ??= Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
