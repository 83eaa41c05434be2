// Game sounds: short tones made with WebAudio (no sound files), and a mute switch remembered in
// localStorage (`doublemove.sound` = "off" when muted).
export type SoundName = 'move' | 'capture' | 'check' | 'end' | 'low-time';

const KEY = 'doublemove.sound';
let ctx: AudioContext | null = null;

export const soundMuted = (): boolean => {
  try { return localStorage.getItem(KEY) === 'off'; } catch { return false; }
};
export function setSoundMuted(muted: boolean): void {
  try { localStorage.setItem(KEY, muted ? 'off' : 'on'); } catch {}
}

// Each sound: tones as [frequency Hz, start s, length s], and the wave.
const TONES: Record<SoundName, { wave: OscillatorType; notes: [number, number, number][]; gain: number }> = {
  move: { wave: 'triangle', notes: [[520, 0, 0.07]], gain: 0.25 },
  capture: { wave: 'square', notes: [[330, 0, 0.05], [220, 0.05, 0.08]], gain: 0.12 },
  check: { wave: 'sawtooth', notes: [[880, 0, 0.08], [660, 0.1, 0.1]], gain: 0.1 },
  end: { wave: 'sine', notes: [[523, 0, 0.15], [659, 0.15, 0.15], [784, 0.3, 0.3]], gain: 0.25 },
  'low-time': { wave: 'square', notes: [[1000, 0, 0.05], [1000, 0.12, 0.05]], gain: 0.08 },
};

/** Plays a sound unless muted. The sounds played are listed in `window.__sounds` (for the tests). */
export function playSound(name: SoundName): void {
  const w = window as any;
  (w.__sounds ??= []).push({ name, muted: soundMuted() });
  if (soundMuted()) return;
  try {
    const AC = window.AudioContext ?? w.webkitAudioContext;
    if (!AC) return;
    ctx ??= new AC() as AudioContext;
    if (ctx.state === 'suspended') void ctx.resume().catch(() => {});
    const t0 = ctx.currentTime + 0.01;
    const spec = TONES[name];
    for (const [f, at, len] of spec.notes) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = spec.wave;
      osc.frequency.value = f;
      gain.gain.setValueAtTime(spec.gain, t0 + at);
      gain.gain.exponentialRampToValueAtTime(0.0001, t0 + at + len);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t0 + at);
      osc.stop(t0 + at + len + 0.02);
    }
  } catch {}
}
