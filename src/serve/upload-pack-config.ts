import type { GitConfig } from '../config/git-config.js';
import { parseBool, parseConfigInt } from '../config/git-config.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { HiddenRefs } from '../refs/hidden-refs.js';

/** Wants of ids no ref names that upload-pack allows (git's allow_uor). */
export const ALLOW_TIP_SHA1 = 1;
export const ALLOW_REACHABLE_SHA1 = 2;
/** Any id at all; implies the other two. */
export const ALLOW_ANY_SHA1 = 7;

/** What git's upload-pack reads from the configuration (upload_pack_config, ls-refs.c's ensure_config_read). */
export interface UploadPackConfig {
  /** uploadpack.allowTipSHA1InWant, allowReachableSHA1InWant, allowAnySHA1InWant, as bits. */
  allowUnadvertised: number;
  /** uploadpack.keepAlive: seconds of silence before an empty side-band packet while the pack is made; -1 never. */
  keepAlive: number;
  /** uploadpack.allowFilter */
  allowFilter: boolean;
  /** uploadpack.allowRefInWant (v2's want-ref). */
  allowRefInWant: boolean;
  /** uploadpack.allowSidebandAll (or GIT_TEST_SIDEBAND_ALL). */
  allowSidebandAll: boolean;
  /** uploadpackfilter.allow: whether a filter without its own setting is allowed. */
  filterFallback: boolean;
  /** uploadpackfilter.<filter>.allow, by git's filter name (blob:none, blob:limit, tree, sparse:oid, object:type, combine). */
  allowedFilters: Map<string, boolean>;
  /** uploadpackfilter.tree.maxDepth (Infinity when unset). */
  treeFilterMaxDepth: number;
  /** transfer.hideRefs and uploadpack.hideRefs. */
  hidden: HiddenRefs;
  /** lsrefs.unborn: advertise (default), allow or ignore. */
  unborn: 'advertise' | 'allow' | 'ignore';
}

function bool(key: string, value: string | null): boolean {
  return parseBool(value, key);
}

/**
 * upload-pack's settings from git's configuration and environment (uploadpack.*, transfer.hideRefs,
 * protocol.version).
 */
export function uploadPackConfig(config: GitConfig, env: Readonly<Record<string, string | undefined>>): UploadPackConfig {
  const out: UploadPackConfig = {
    allowUnadvertised: 0, keepAlive: 5, allowFilter: false, allowRefInWant: false, allowSidebandAll: false,
    filterFallback: true, allowedFilters: new Map(), treeFilterMaxDepth: Infinity,
    hidden: HiddenRefs.fromConfig(config, 'uploadpack'), unborn: 'advertise',
  };
  const flag = (on: boolean, bits: number): void => {
    out.allowUnadvertised = on ? out.allowUnadvertised | bits : out.allowUnadvertised & ~bits;
  };
  // In order: a later allowTipSHA1InWant=false clears what an earlier allowAnySHA1InWant set.
  for (const { key, value, file } of config.entries) {
    if (key === 'uploadpack.allowtipsha1inwant') flag(bool(key, value), ALLOW_TIP_SHA1);
    else if (key === 'uploadpack.allowreachablesha1inwant') flag(bool(key, value), ALLOW_REACHABLE_SHA1);
    else if (key === 'uploadpack.allowanysha1inwant') flag(bool(key, value), ALLOW_ANY_SHA1);
    else if (key === 'uploadpack.keepalive') {
      const n = value === null ? undefined : parseConfigInt(value);
      if (n === undefined) throw new PackwrightError('CONFIG_INVALID', `bad numeric config value '${value ?? ''}' for '${key}'`);
      out.keepAlive = n === 0 ? -1 : n;
    } else if (key === 'uploadpack.allowfilter') out.allowFilter = bool(key, value);
    else if (key === 'uploadpack.allowrefinwant') out.allowRefInWant = bool(key, value);
    else if (key === 'uploadpack.allowsidebandall') out.allowSidebandAll = bool(key, value);
    else if (key === 'uploadpackfilter.allow') out.filterFallback = bool(key, value);
    else if (key.startsWith('uploadpackfilter.')) {
      const rest = key.slice('uploadpackfilter.'.length);
      const dot = rest.lastIndexOf('.');
      if (dot < 0) continue;
      const name = rest.slice(0, dot);
      const setting = rest.slice(dot + 1);
      if (setting === 'allow') out.allowedFilters.set(name, bool(key, value));
      else if (name === 'tree' && setting === 'maxdepth') {
        // git's callback fails on a bare key, and git dies of it naming where it was set.
        if (value === null) throw new PackwrightError('CONFIG_INVALID', file === 'command line' ? `unable to parse '${key}' from command-line config` : `bad config variable '${key}' in file '${file}'`);
        const n = parseConfigInt(value);
        if (n === undefined || n < 0) throw new PackwrightError('CONFIG_INVALID', `bad numeric config value '${value}' for '${key}'`);
        out.allowedFilters.set('tree', true);
        out.treeFilterMaxDepth = n;
      }
    }
  }
  const sidebandAll = env['GIT_TEST_SIDEBAND_ALL'];
  if (sidebandAll !== undefined && parseBool(sidebandAll, 'GIT_TEST_SIDEBAND_ALL')) out.allowSidebandAll = true;
  const unborn = config.get('lsrefs.unborn');
  if (unborn !== undefined) {
    if (unborn !== 'advertise' && unborn !== 'allow' && unborn !== 'ignore') throw new PackwrightError('CONFIG_INVALID', `invalid value for 'lsrefs.unborn': '${unborn ?? ''}'`);
    out.unborn = unborn;
  }
  return out;
}
