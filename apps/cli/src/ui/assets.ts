// The page, bundled from ui/ when the binary is built (see tsup.config.ts): no CDN, no files to find at runtime.
import js from 'wave-ui:script';
import css from 'wave-ui:styles';
import type { UiAssets } from './server';

export const assets: UiAssets = { js, css };
