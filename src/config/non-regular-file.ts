/**
 * What a path is when it is not a regular file, in the words valarmind's messages use. A cloned
 * repository can ship a FIFO (a read blocks forever), a socket or device, or a symbolic link
 * (another file read, or written, as this one) wherever valarmind expects one of its own files.
 *
 *   const what = nonRegularFile(lstatSync(file));   // undefined for a regular file
 */
interface FileKind {
  isFile(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isDirectory(): boolean;
}

export function nonRegularFile(info: FileKind): string | undefined {
  if (info.isFile()) return undefined;
  if (info.isSymbolicLink()) return "a symbolic link";
  if (info.isFIFO()) return "a FIFO";
  if (info.isDirectory()) return "a directory";
  return "a socket or device";
}
