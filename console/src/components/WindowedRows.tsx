/**
 * A table body that puts in the page only the rows on screen and a few either side: a workspace may hold
 * tens of thousands of keys, configs or policies, and a row each in the DOM locks the page up. The page
 * scrolls as it always did (the window, not a box inside it); rows out of view are replaced by two spacer
 * rows of their height, so the scroll bar, Page Down, End and the mouse wheel cover every row. Tab moves
 * on through the buttons of the rows kept either side, and the browser scrolls the focused one into view,
 * which brings the next rows in.
 */
import { Table } from '@mantine/core';
import { useWindowVirtualizer } from '@tanstack/react-virtual';
import { Fragment, useCallback, useLayoutEffect, useRef, useState, type ReactNode, type Ref } from 'react';

/** What a rendered row must carry: the virtualizer measures it by its index. */
export interface RowProps {
  ref: Ref<HTMLTableRowElement>;
  'data-index': number;
}

/** Rows kept in the page beyond each edge of the screen. */
const OVERSCAN = 12;

function Spacer({ height, columns }: { height: number; columns: number }) {
  return (
    <tr aria-hidden="true" data-spacer="">
      <td colSpan={columns} style={{ height, padding: 0, border: 0 }} />
    </tr>
  );
}

export function WindowedRows<T>({
  rows,
  columns,
  rowKey,
  estimatedHeight,
  children: renderRow,
}: {
  rows: readonly T[];
  /** How many columns the table has, for the spacer rows. */
  columns: number;
  /** A row's lasting identity (its id), so a row keeps its element, focus and measure as rows come and go. */
  rowKey(row: T): string;
  /** A row's height before it is measured (px). */
  estimatedHeight: number;
  /** The row: a `Table.Tr` given `props`. */
  children(row: T, props: RowProps): ReactNode;
}) {
  const body = useRef<HTMLTableSectionElement>(null);
  // Where the body starts on the page: what is above it (title, filters, an alert) moves it.
  const [top, setTop] = useState(0);
  useLayoutEffect(() => {
    if (!body.current) return;
    const next = Math.round(body.current.getBoundingClientRect().top + window.scrollY);
    if (next !== top) setTop(next);
  });
  // The same function while the rows are the same: a new one makes the virtualizer lay out every row
  // again, on each scroll.
  const getItemKey = useCallback((index: number) => rowKey(rows[index]), [rows, rowKey]);
  const virtualizer = useWindowVirtualizer({
    count: rows.length,
    estimateSize: () => estimatedHeight,
    overscan: OVERSCAN,
    scrollMargin: top,
    getItemKey,
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0];
  const last = items.at(-1);
  const before = first ? first.start - top : 0;
  const after = last ? virtualizer.getTotalSize() - (last.end - top) : 0;
  // A CSS stripe goes by the row's place among its siblings: as many spacer rows above as the first row's
  // index is odd or even keeps each row's stripe where scrolling moves the first row.
  const spacersAbove = (first?.index ?? 0) % 2 === 0 ? 2 : 1;
  return (
    <Table.Tbody ref={body}>
      <Spacer height={before} columns={columns} />
      {spacersAbove === 2 && <Spacer height={0} columns={columns} />}
      {items.map((item) => (
        <Fragment key={item.key}>
          {renderRow(rows[item.index], { ref: virtualizer.measureElement, 'data-index': item.index })}
        </Fragment>
      ))}
      <Spacer height={Math.max(0, after)} columns={columns} />
    </Table.Tbody>
  );
}
