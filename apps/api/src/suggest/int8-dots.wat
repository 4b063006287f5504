;; The LSA model's nearest-skill scan in WebAssembly SIMD (int8-dots.ts loads it; `npm run wasm` compiles
;; it into int8-dots.wasm.ts). dots(rows, bases, count, q, dims, out): for k < count,
;;   out[k] = sum over j < dims of rows[bases[k] + j] * q[j]
;; rows int8, q int16, bases and out i32, all byte offsets into this module's memory; dims a multiple of
;; 16. Integer sums are exact, so the result is the same whatever order the products are added in.
(module
  (memory (export "memory") 1)
  (func (export "dots")
    (param $rows i32) (param $bases i32) (param $count i32) (param $q i32) (param $dims i32) (param $out i32)
    (local $k i32) (local $row i32) (local $j i32) (local $acc v128) (local $v v128) (local $qj i32)
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (local.set $row
          (i32.add (local.get $rows)
            (i32.load (i32.add (local.get $bases) (i32.shl (local.get $k) (i32.const 2))))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $row_done
          (loop $each_16
            (br_if $row_done (i32.ge_u (local.get $j) (local.get $dims)))
            (local.set $v (v128.load (i32.add (local.get $row) (local.get $j))))
            (local.set $qj (i32.add (local.get $q) (i32.shl (local.get $j) (i32.const 1))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.dot_i16x8_s
                  (i16x8.extend_low_i8x16_s (local.get $v))
                  (v128.load (local.get $qj)))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.dot_i16x8_s
                  (i16x8.extend_high_i8x16_s (local.get $v))
                  (v128.load offset=16 (local.get $qj)))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $each_16)))
        (i32.store
          (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $each_row))))
)
