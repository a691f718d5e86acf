// Optional sounds, off until the player turns them on (the header's switch, kept in this
// browser): a tick for a move, a low buzz for a refusal, a rising chord for a win. Made by
// the Web Audio API: no sound files to fetch.

const KEY = "solrace.sounds";
let audio = null;

export function soundsOn() {
  return localStorage.getItem(KEY) === "1";
}

export function setSounds(on) {
  localStorage.setItem(KEY, on ? "1" : "0");
}

const TUNES = {
  move: [[660, 0, 0.05]],
  refused: [[160, 0, 0.18]],
  win: [[523, 0, 0.15], [659, 0.12, 0.15], [784, 0.24, 0.3]],
};

export function play(name) {
  if (!soundsOn() || !TUNES[name]) return;
  try {
    audio ??= new AudioContext();
    const start = audio.currentTime;
    for (const [freq, at, length] of TUNES[name]) {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.type = name === "refused" ? "square" : "sine";
      tone.frequency.value = freq;
      gain.gain.setValueAtTime(0.08, start + at);
      gain.gain.exponentialRampToValueAtTime(0.001, start + at + length);
      tone.connect(gain).connect(audio.destination);
      tone.start(start + at);
      tone.stop(start + at + length);
    }
  } catch {
    // No audio output: the game goes on in silence.
  }
}
