/**
 * Copies text to the clipboard. The Clipboard API exists only in a secure context (https, or localhost): a
 * gateway served over plain http under another name has none, and the text is copied there from a
 * selection, which browsers still allow on a click.
 */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.readOnly = true;
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('The browser would not copy it: select the key and copy it');
}
