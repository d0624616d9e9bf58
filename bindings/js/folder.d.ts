import type { TreeFile } from './index.js';

/** The files of `<input type="file" webkitdirectory>`, paths relative to the picked folder. */
export declare function filesFromFileList(fileList: Iterable<File>): Promise<TreeFile[]>;
/** Every file below a handle from `showDirectoryPicker()`. */
export declare function filesFromDirectory(dir: FileSystemDirectoryHandle): Promise<TreeFile[]>;
/** Writes files below a handle from `showDirectoryPicker({ mode: 'readwrite' })`, creating folders. */
export declare function filesToDirectory(dir: FileSystemDirectoryHandle, files: TreeFile[]): Promise<void>;
/** A zip archive (stored, UTF-8 names) of the files. */
export declare function zipFiles(files: TreeFile[], options?: { date?: Date }): Uint8Array;
