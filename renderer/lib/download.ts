/** Saves text the engine produced (an incident note, a sign-off request) through the browser's download. */
import type { ExportedFile } from '../../shared/contractTypes.ts';

export function download(file: ExportedFile): void {
  const url = URL.createObjectURL(new Blob([file.text], { type: file.mimeType }));
  const a = document.createElement('a');
  a.href = url;
  a.download = file.fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
